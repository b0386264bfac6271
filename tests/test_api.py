"""The Python API: `rolebench.evaluate`, `judge`, `score` (the command line is a thin layer over them).

Each returns the typed results record, equal to the results.json it writes; `model` may be a spec, a
transformers model and tokenizer held in memory (answers identical to `hf:PATH` of the same weights), or
any object with the adapter protocol. Models: `baseline:rolegpt`, the session's tiny random Llama, and an
adapter written here; the packaged demo as data.
"""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import rolebench
from model_adapters import Generation, GenerationConfig, Request
from rolebench.evaluation.api import EVALUATE_OPTIONS
from rolebench.judging.settings import JudgeSettings
from rolebench.run.folder import read_results
from tests.fake_openai import fake_openai  # noqa: F401 - fixture
from tests.test_judge import FAST, ranking

DEMO = "rolebench_demo"


def test_evaluate_returns_what_it_writes_into_a_temporary_folder_when_none_is_given():
    results = rolebench.evaluate("baseline:rolegpt", DEMO, limit=3, progress=False)
    assert results.folder is not None and results.folder.name.startswith("rolebench-run-")
    assert results == read_results(results.folder)
    assert set(results.results) == {"rolebench_demo_general", "rolebench_demo_specific"}
    assert results.config.run is not None and results.config.run["limit"] == 3


def test_a_data_folder_may_be_given_as_a_path(tmp_path):
    import rolebench.data

    demo = Path(rolebench.data.__file__).parent / "demo"
    as_path = rolebench.evaluate("baseline:rolegpt", DEMO, limit=3, data_dir=demo, output=tmp_path / "a")
    as_text = rolebench.evaluate("baseline:rolegpt", DEMO, limit=3, data_dir=str(demo), output=tmp_path / "b")
    assert as_path.config.run is not None and as_path.config.run["data_dir"] == str(demo)  # recorded as text
    assert as_path.results["rolebench_demo_general"].cus == as_text.results["rolebench_demo_general"].cus


def test_judge_and_score_return_what_they_write(tmp_path, fake_openai):
    run = tmp_path / "run"
    rolebench.evaluate("baseline:rolegpt", [DEMO], output=run, progress=False)
    server = fake_openai(lambda body: ranking("model_a"))
    judged = rolebench.judge(
        run, "openai:fake-model", base_url=server.base_url, judge_args=FAST, progress=False
    )
    assert judged == read_results(run) and judged.results["rolebench_demo_general"].value("judged")
    scored = rolebench.score(run, "opencompass")
    assert scored == read_results(run) and "opencompass" in scored.config.scoring["protocols"]
    assert scored.results["rolebench_demo_general"].value("win_rate") is not None  # the judge's fields stay


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rolebench.evaluate("baseline:rolegpt", DEMO, limt=3), "unknown option 'limt'"),
        (lambda: rolebench.evaluate("baseline:rolegpt", DEMO, limit=0), "limit 0 must be at least 1"),
        (lambda: rolebench.evaluate("baseline:rolegpt", DEMO, temperature=True), "temperature True"),
        (lambda: rolebench.evaluate("baseline:rolegpt", "", progress=False), "no task given"),
        (lambda: rolebench.evaluate("baseline:rolegpt", DEMO, protocol="rouge"), "unknown scoring protocol"),
        (lambda: rolebench.judge(".", "openai:x", judge_limit=-1), "judge_limit -1 must be at least 1"),
        (lambda: rolebench.judge(".", "openai:x", concurency=3), "did you mean 'concurrency'?"),
        (lambda: rolebench.score(".", "rouge"), "unknown scoring protocol 'rouge'"),
    ],
)
def test_bad_options_raise_one_clear_error_naming_them(call, message):
    with pytest.raises(rolebench.RoleBenchError, match=re.escape(message)):
        call()


def test_a_model_given_in_memory_answers_as_its_spec_does(tiny_model_dir, tmp_path):
    """A training loop evaluates the model it holds: the same answers as `hf:PATH` of the same weights, its
    training mode kept, and other weights never served another's stored answers."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options = {"tasks": DEMO, "limit": 4, "max_new_tokens": 12, "progress": False}
    by_spec = rolebench.evaluate(f"hf:{tiny_model_dir}", output=tmp_path / "spec", **options)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model.train()
    in_memory = rolebench.evaluate((model, tokenizer), output=tmp_path / "memory", **options)
    assert model.training  # left as it was found
    for task in by_spec.results:
        spec_rows = rolebench.run.folder.read_samples(tmp_path / "spec", task)
        memory_rows = rolebench.run.folder.read_samples(tmp_path / "memory", task)
        assert [r.output for r in memory_rows] == [r.output for r in spec_rows]
        assert in_memory.results[task].value("cus") == by_spec.results[task].value("cus")
    identity = in_memory.config.model["identity"]
    assert identity["weights_digest"] and in_memory.config.model["spec"].startswith("hf:")
    with __import__("torch").no_grad():
        next(model.parameters()).add_(0.5)  # a training step
    after = rolebench.evaluate((model, tokenizer), output=tmp_path / "after", **options)
    assert after.config.model["identity"]["weights_digest"] != identity["weights_digest"]
    with pytest.raises(rolebench.ConfigError, match="holds a run of"):  # not the same model any more
        rolebench.evaluate((model, tokenizer), output=tmp_path / "memory", **options)


class Shouting:
    """A model of our own, through the adapter protocol: it answers the question in capitals."""

    spec = "shouting:v1"

    def info(self) -> dict[str, Any]:
        return {"name": "shouting", "revision": "v1"}

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        for request in requests:
            yield request, Generation(text=request.messages[-1]["content"].upper(), finish_reason="stop")

    def close(self) -> None:
        raise AssertionError("a model given in memory belongs to its caller: never closed")


def test_any_object_with_the_adapter_protocol_is_a_model(tmp_path):
    results = rolebench.evaluate(Shouting(), DEMO, output=tmp_path, limit=2, progress=False)
    row = rolebench.run.folder.read_samples(tmp_path, "rolebench_demo_general")[0]
    assert row.output == row.messages[-1]["content"].upper()
    assert results.config.model["spec"] == "shouting:v1" and results.config.model["name"] == "shouting"
    again = rolebench.evaluate(Shouting(), DEMO, output=tmp_path, limit=2, progress=False)
    assert again.results == results.results  # resumed from the store: the same run
    with pytest.raises(TypeError, match="adapter protocol"):
        rolebench.evaluate(object(), DEMO)


def test_the_documented_options_are_exactly_the_settings_records():
    """`evaluate`'s docstring lists its options; they are the fields of the records, no more, no less."""
    fields = {name for model in EVALUATE_OPTIONS for name in model.model_fields} - {"model", "tasks"}
    documented = set(re.findall(r"`([a-z_]+)`", inspect.getdoc(rolebench.evaluate) or ""))
    assert fields <= documented, fields - documented
    judge_doc = set(re.findall(r"`([a-z_]+)`", inspect.getdoc(rolebench.judge) or ""))
    assert set(JudgeSettings.model_fields) <= judge_doc, set(JudgeSettings.model_fields) - judge_doc


def test_importing_rolebench_stays_light():
    import subprocess
    import sys

    heavy = "('torch', 'transformers', 'rolebench.evaluation.api')"
    code = f"import sys, rolebench; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert Path(rolebench.__file__).name == "__init__.py"


def test_another_server_behind_the_same_model_name_is_another_model(tmp_path, fake_openai):
    """`openai:M@URL_B` into a folder made with URL_A: refused, naming the endpoint (never A's answers);
    a folder an older rolebench made (its identity without the endpoint) is refused with a line saying so."""
    import json

    server_a, server_b = fake_openai(lambda body: "from A"), fake_openai(lambda body: "from B")
    options = {"limit": 2, "progress": False, "output": tmp_path}
    rolebench.evaluate(f"openai:fake-model@{server_a.base_url}", DEMO, **options)
    with pytest.raises(
        rolebench.ConfigError, match=re.escape(f"endpoint {server_a.base_url} there")
    ) as caught:
        rolebench.evaluate(f"openai:fake-model@{server_b.base_url}", DEMO, **options)
    assert f"{server_b.base_url} now" in str(caught.value)
    again = rolebench.evaluate(f"openai:fake-model@{server_b.base_url}", DEMO, overwrite=True, **options)
    rows = rolebench.run.folder.read_samples(tmp_path, "rolebench_demo_general")
    assert {r.output for r in rows} == {"from B"} and again.config.model["identity"]["endpoint"]
    run_json = tmp_path / "run.json"
    record = json.loads(run_json.read_text(encoding="utf-8"))
    record["config"]["model"]["identity"].pop("endpoint")  # as an older rolebench recorded it
    run_json.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(
        rolebench.ConfigError, match="endpoint: not recorded there \\(an older rolebench left it out"
    ):
        rolebench.evaluate(f"openai:fake-model@{server_b.base_url}", DEMO, **options)


def test_a_model_in_memory_is_known_by_its_generation_config_and_refuses_ignored_model_args(
    tiny_model_dir, tmp_path
):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    options = {"limit": 2, "max_new_tokens": 4, "progress": False, "output": tmp_path}
    first = rolebench.evaluate((model, tokenizer), DEMO, **options)
    assert rolebench.evaluate((model, tokenizer), DEMO, **options).results == first.results  # resumed
    model.generation_config.eos_token_id = [tokenizer.eos_token_id, tokenizer.eos_token_id + 2]  # a new stop
    with pytest.raises(rolebench.ConfigError, match="holds a run of .*stop_ids"):
        rolebench.evaluate((model, tokenizer), DEMO, **options)
    for ignored in ({"dtype": "float16"}, {"device": "cpu"}, {"trust_remote_code": True}):
        with pytest.raises(rolebench.ConfigError, match="cannot apply to a model given in memory"):
            rolebench.evaluate((model, tokenizer), DEMO, model_args=ignored, **options)
    plain = rolebench.evaluate(
        (model, tokenizer),
        DEMO,
        model_args={"apply_chat_template": False},
        **{**options, "output": tmp_path / "p"},
    )
    assert plain.config.model["identity"]["options"]["apply_chat_template"] is False


def test_an_edited_chat_template_is_another_model_for_evaluate(tiny_model_dir, tmp_path):
    """`hf:PATH` whose chat template was edited after a run: its stored answers are never served again; the
    folder's run is refused naming what changed."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    options = {"limit": 2, "max_new_tokens": 4, "progress": False, "output": tmp_path / "run"}
    first = rolebench.evaluate(f"hf:{model}", DEMO, **options)
    template = model / "chat_template.jinja"
    assert template.is_file() and "chat_template.jinja" in first.config.model["identity"]["tokenizer"]
    template.write_text(template.read_text(encoding="utf-8").replace("<|im_start|>", "<|im_start|> "))
    with pytest.raises(rolebench.ConfigError, match=re.escape("tokenizer: chat_template.jinja")):
        rolebench.evaluate(f"hf:{model}", DEMO, **options)


def test_a_server_answer_that_is_not_valid_unicode_is_a_failed_request(tmp_path, fake_openai):
    """A server may send a lone surrogate escaped in JSON: that answer is a failed request (never stored,
    asked again by the next run, the run's exit 1), never an error that stops the run, nor a store it
    poisons."""
    import itertools

    from tests.fake_openai import Reply

    calls = itertools.count()
    server = fake_openai(lambda body: Reply(text="a\ud800b") if next(calls) == 0 else "fine")
    options = {"limit": 3, "progress": False, "output": tmp_path, "concurrency": 1}
    results = rolebench.evaluate(f"openai:fake-model@{server.base_url}", DEMO, **options)
    rows = [r for task in results.results for r in rolebench.run.folder.read_samples(tmp_path, task)]
    assert sum(task.n_failed for task in results.results.values()) == 1 == sum(r.failed for r in rows)
    assert all("not valid Unicode" in (r.error or "") for r in rows if r.failed)
    again = rolebench.evaluate(f"openai:fake-model@{server.base_url}", DEMO, **options)
    assert sum(task.n_failed for task in again.results.values()) == 0 and server.count() == len(rows) + 1


def test_a_model_in_memory_has_the_same_identity_in_every_process(tiny_model_dir):
    """Stored answers serve the same model again in a new process (e.g. after a restart of training)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys; from transformers import AutoModelForCausalLM as M, AutoTokenizer as T; "
        "from model_adapters.hf import HFAdapter; path = sys.argv[1]; "
        "print(json.dumps(HFAdapter.from_loaded(M.from_pretrained(path), T.from_pretrained(path))"
        ".fingerprint_loaded()))"
    )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from model_adapters.hf import HFAdapter

    run = subprocess.run(
        [sys.executable, "-c", code, str(tiny_model_dir)], capture_output=True, text=True, check=True
    )
    first = json.loads(run.stdout.strip().splitlines()[-1])
    model, tokenizer = (
        AutoModelForCausalLM.from_pretrained(tiny_model_dir),
        AutoTokenizer.from_pretrained(tiny_model_dir),
    )
    second = HFAdapter.from_loaded(model, tokenizer).fingerprint_loaded()
    assert first == second and first["weights_digest"] and first["configs_sha256"]


TEMPORARY_RUNS = """
import os, sys, tempfile
from pathlib import Path
import rolebench

results = rolebench.evaluate("baseline:rolegpt", "rolebench_demo", limit=2, progress=False)
assert results.folder.is_dir() and (results.folder / "results.json").is_file()
print(results.folder)


class Broken:
    spec = "custom:broken"

    def info(self):
        return {"name": "broken"}

    def generate(self, requests, config):
        raise RuntimeError("the model broke")

    def close(self):
        pass


try:
    rolebench.evaluate(Broken(), "rolebench_demo", limit=2, progress=False)
except Exception as error:
    print("failed:", type(error).__name__, file=sys.stderr)
left = sorted(p.name for p in Path(tempfile.gettempdir()).glob("rolebench-run-*"))
print("after the failed call:", left)
"""


def test_temporary_run_folders_are_removed_at_exit_and_when_a_call_fails(tmp_path):
    """evaluate() without `output` runs in a temporary folder (`results.folder` while Python runs): a failed
    call removes its own at once, and none is left once Python exits (issue 36 item 7, issue 35 item 9)."""
    import os
    import subprocess
    import sys

    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-c", TEMPORARY_RUNS], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    folder = Path(done.stdout.splitlines()[0])
    assert folder.parent == temp and folder.name.startswith("rolebench-run-")
    assert done.stdout.splitlines()[1] == f"after the failed call: {[folder.name]}", done.stdout + done.stderr
    assert "failed:" in done.stderr
    assert not list(temp.glob("rolebench-run-*"))  # the successful call's, once Python exited
