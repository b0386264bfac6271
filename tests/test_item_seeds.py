"""Sampling seeds per item (issue 32, item 4): each sampled item draws with its own seed, derived from the
run's seed and the item's id, in every backend that samples; a run made twice, or resumed, answers the
same; greedy runs keep their keys. On real components: the tiny HF model (hf:), SmolLM2's GGUF (llama.cpp),
the fake OpenAI server, and `rolebench evaluate` on the packaged demo."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_adapters import GenerationConfig, Request, item_seed, load_model
from rolebench.cached_model import CachedModel
from rolebench.cli.main import main
from rolebench.data.samples import Sample
from rolebench.evaluation.generate import generation_key
from rolebench.evaluation.plan import decoding_record
from rolebench.prompts.roleplay import role_messages
from rolebench.run.elicitation import Elicitation, sample_request
from rolebench.run.folder import read_results, read_samples
from rolebench.storage.records import RecordStore
from tests.fake_openai import fake_openai  # noqa: F401 - `fake_openai` is a fixture

SAMPLED = GenerationConfig(max_new_tokens=8, temperature=1.0, seed=7, batch_size=3)
MESSAGES = role_messages("Jack Sparrow", "A pirate captain.", "Who are you?", "en")


def same_question(n: int, seed: int = 7) -> list[Request]:
    """n items asking the very same thing: only their seeds tell them apart."""
    return [Request(id=f"item{i}", messages=MESSAGES, seed=item_seed(seed, f"item{i}")) for i in range(n)]


def test_an_items_seed_comes_from_the_runs_seed_and_its_id():
    seeds = {item_seed(0, f"id{i}") for i in range(1000)}
    assert len(seeds) == 1000 and all(0 <= s < 2**31 for s in seeds)
    assert item_seed(0, "id1") == item_seed(0, "id1") != item_seed(1, "id1")
    sample = Sample(
        id="zh/role/1",
        split="s",
        index=1,
        role="r",
        question="q",
        references=("a",),
        types=(),
        description="d",
        language="zh",
    )
    request, _ = sample_request(sample, Elicitation(), None, 5)
    assert request.seed == item_seed(5, "zh/role/1")
    assert sample_request(sample, Elicitation(), None)[0].seed is None  # no run seed: the config's
    greedy = GenerationConfig(seed=5)
    assert greedy.seed_for(request) == 5 and SAMPLED.seed_for(request) == request.seed


def test_greedy_keys_are_as_they_were_and_sampled_keys_hold_the_items_seed(tmp_path):
    model = CachedModel("baseline:question", {}, RecordStore(tmp_path / "store.sqlite"))
    one, two = same_question(2)
    greedy = GenerationConfig(seed=7)
    # the key before per-item seeds: model, decoding, messages, meta
    meta = {k: one.meta.get(k) for k in model.meta_keys}
    before = model.key("generation", greedy.decoding_key(), one.messages, meta)
    assert (
        generation_key(model, greedy, one, Elicitation())
        == before
        == generation_key(model, greedy, two, Elicitation())
    )
    assert decoding_record(greedy) == greedy.decoding_key()
    sampled = [generation_key(model, SAMPLED, r, Elicitation()) for r in (one, two)]
    assert sampled[0] != sampled[1]  # two items: two draws, never one answer shared
    assert sampled[0] == generation_key(model, SAMPLED, same_question(1)[0], Elicitation())
    # a sampled key of the old rule (one seed for every item) is not one of the new
    assert model.key("generation", SAMPLED.decoding_key(), one.messages, meta) not in sampled
    assert decoding_record(SAMPLED)["item_seeds"]


def test_hf_rows_draw_with_their_own_seeds(tiny_model_dir):
    adapter = load_model(f"hf:{tiny_model_dir}")
    requests = same_question(3)
    first = {r.id: g.text for r, g in adapter.generate(requests, SAMPLED)}
    assert {r.id: g.text for r, g in adapter.generate(requests, SAMPLED)} == first  # the same run again
    assert len(set(first.values())) == 3  # one question, three seeds: three draws
    # an item's answer does not depend on its batch: alone, or behind others, it is the same
    alone = {r.id: g.text for r, g in adapter.generate(requests[2:], SAMPLED)}
    assert alone["item2"] == first["item2"]
    reordered = {r.id: g.text for r, g in adapter.generate(requests[::-1], SAMPLED)}
    assert reordered == first
    greedy = GenerationConfig(max_new_tokens=8, batch_size=3)
    assert len({g.text for _, g in adapter.generate(requests, greedy)}) == 1  # greedy ignores the seeds


def test_llamacpp_items_draw_with_their_own_seeds(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    adapter = load_model("smollm2:135m")
    config = GenerationConfig(max_new_tokens=12, temperature=0.9, top_p=0.95, seed=7, batch_size=2)
    requests = same_question(3)
    try:
        first = {r.id: g.text for r, g in adapter.generate(requests, config)}
        again = {r.id: g.text for r, g in adapter.generate(requests[::-1], config)}
        alone = {r.id: g.text for r, g in adapter.generate(requests[1:2], config)}
    finally:
        adapter.close()
    assert again == first and alone["item1"] == first["item1"]
    assert len(set(first.values())) > 1  # one question, three seeds: not one draw repeated


def test_an_api_request_carries_its_items_seed(fake_openai):
    server = fake_openai(lambda body: "an answer")
    adapter = load_model("openai:fake-model", base_url=server.base_url)
    try:
        requests = same_question(2)
        list(adapter.generate(requests, SAMPLED))
        list(adapter.generate(requests, GenerationConfig(seed=7)))
    finally:
        adapter.close()
    sent = [r.body["seed"] for r in server.received]
    assert sent[:2] in ([r.seed for r in requests], [r.seed for r in requests][::-1])
    assert sent[2:] == [7, 7]  # greedy requests are sent as they always were


def evaluate(out: Path, *extra: str) -> Path:
    args = ["evaluate", "--model", "smollm2:135m", "--tasks", "rolebench_demo_specific", "--output", str(out)]
    assert (
        main(
            [*args, "--temperature", "0.8", "--seed", "1", "--max-new-tokens", "12", "--no-progress", *extra]
        )
        == 0
    )
    return out


def test_a_sampled_run_resumed_answers_as_one_made_at_once(smollm2_gguf, tmp_path):
    pytest.importorskip("llama_cpp")
    whole = evaluate(tmp_path / "whole", "--limit", "4")
    resumed = evaluate(tmp_path / "resumed", "--limit", "2")  # stopped after two items...
    evaluate(resumed, "--limit", "4")  # ... and run again: the other two are asked now
    answers = [
        {s.id: s.output for s in read_samples(run, "rolebench_demo_specific")} for run in (whole, resumed)
    ]
    assert answers[0] == answers[1] and len(answers[0]) == 4
    config = read_results(whole).config
    assert config.generation["item_seeds"] and config.generation["temperature"] == 0.8


def test_a_run_sampled_with_one_seed_for_every_item_is_not_resumed_with_another_rule(smollm2_gguf, tmp_path):
    pytest.importorskip("llama_cpp")
    run = evaluate(tmp_path / "old", "--limit", "2")
    for name in ("run.json", "results.json"):  # as a run made before per-item seeds records itself
        path = run / name
        data = json.loads(path.read_text(encoding="utf-8"))
        config = data.get("config", data)
        config["generation"].pop("item_seeds")
        path.write_text(json.dumps(data), encoding="utf-8")
    args = ["evaluate", "--model", "smollm2:135m", "--tasks", "rolebench_demo_specific", "--output", str(run)]
    extra = ["--temperature", "0.8", "--seed", "1", "--max-new-tokens", "12", "--no-progress", "--limit", "2"]
    assert main([*args, *extra]) == 2
