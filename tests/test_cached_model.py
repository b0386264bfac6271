"""One cache identity for every store: what changes an output is in the key, transport settings are not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from model_adapters import ConfigError, GenerationConfig, ModelSpec, model_identity
from rolebench.cached_model import CachedModel
from rolebench.judging.store import judgment_key
from rolebench.recipes.data.generation import CachedGenerator, GeneratorSettings, Job
from rolebench.storage.records import RecordStore

MESSAGES = [{"role": "user", "content": "Hi"}]


@pytest.fixture
def store(tmp_path: Path):
    with RecordStore(tmp_path / "s.sqlite") as opened:
        yield opened


def test_transport_options_stay_out_of_the_identity() -> None:
    base = model_identity("openai:gpt-4o-mini", {})
    assert model_identity("openai:gpt-4o-mini", {"timeout": "5", "max_retries": 1, "backoff": "0.5"}) == base
    assert model_identity("openai:gpt-4o-mini@https://api.openai.com/v1/", {}) == base  # OpenAI's own URL
    assert model_identity("openai:gpt-4o", {}) != base


def test_the_server_an_api_model_answers_at_is_in_its_identity() -> None:
    """The same model name behind another URL is another model (another server's weights, template,
    quantization): its answers are never served for the first one's. The URL is normalised."""
    at_a = model_identity("openai:m@http://127.0.0.1:8000/v1", {})
    assert at_a["endpoint"] == "http://127.0.0.1:8000/v1" and at_a["spec"] == "openai:m"
    assert model_identity("openai:m@http://127.0.0.1:8000/v1/", {}) == at_a
    assert model_identity("openai:m@http://127.0.0.1:8000", {}) == at_a  # a bare host gets /v1
    assert model_identity("openai:m", {"base_url": "http://127.0.0.1:8000/v1"}) == at_a  # --base-url
    assert model_identity("openai:m@http://127.0.0.1:8001/v1", {}) != at_a
    assert model_identity("openai:m", {}) != at_a


def test_the_judge_holds_its_endpoint_apart_as_before(tmp_path: Path, store: RecordStore) -> None:
    """A judge's verdicts keep their keys: its endpoint is a part of its judgment keys of its own, never
    counted twice through its model identity."""
    from rolebench.judging.config import load_judge_config
    from rolebench.judging.sets import judge_identity
    from rolebench.judging.settings import JudgeSettings

    settings = JudgeSettings(base_url="http://127.0.0.1:9/v1")
    identity = judge_identity("openai:judge", settings, load_judge_config(settings.judge_config))
    assert "endpoint" not in identity["model"] and identity["endpoint"] == "http://127.0.0.1:9/v1"


def test_a_local_models_chat_template_and_tokenizer_are_in_its_identity(tmp_path: Path) -> None:
    """Editing `chat_template.jinja` (or the tokenizer) changes every prompt: another model; an untouched
    folder has the same identity in every process."""
    import json
    import subprocess
    import sys

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"0" * 10)
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    template = folder / "chat_template.jinja"
    template.write_text("{{ messages }}", encoding="utf-8")
    before = model_identity(f"hf:{folder}", {})
    assert set(before["tokenizer"]) == {"chat_template.jinja", "tokenizer.json"}
    code = (
        "import json; from model_adapters import model_identity; "
        f"print(json.dumps(model_identity('hf:{folder}', {{}})))"
    )
    other_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(other_process.stdout) == before
    template.write_text("{{ messages | reverse }}", encoding="utf-8")
    assert model_identity(f"hf:{folder}", {}) != before
    assert model_identity(f"peft:{folder}+{folder}", {})["adapter_tokenizer"]


def test_output_changing_options_are_in_the_identity(tiny_model_dir: Path) -> None:
    fp32 = model_identity(f"hf:{tiny_model_dir}", {"dtype": "float32"})
    assert model_identity(f"hf:{tiny_model_dir}", {"dtype": "fp32"}) == fp32  # aliases normalised
    assert model_identity(f"hf:{tiny_model_dir}", {"dtype": "float16"}) != fp32
    assert model_identity("vllm:org/m", {"quantization": "awq"}) != model_identity("vllm:org/m", {})
    assert model_identity("vllm:org/m", {"chunk_size": "8"}) == model_identity("vllm:org/m", {})
    assert model_identity("hf:org/m@v1", {}) != model_identity("hf:org/m@v2", {})


def test_replaced_local_weights_change_the_identity(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"0" * 10)
    before = model_identity(f"hf:{folder}", {})
    weights.write_bytes(b"1" * 11)
    os.utime(weights, ns=(1, 1))
    assert model_identity(f"hf:{folder}", {}) != before


def test_bad_options_fail_when_the_identity_is_taken() -> None:
    with pytest.raises(ConfigError, match="did you mean timeout"):
        model_identity("openai:gpt-4o-mini", {"timeuot": "5"})
    with pytest.raises(ConfigError, match="timeout"):
        model_identity("openai:gpt-4o-mini", {"timeout": "nan"})


def test_judge_verdicts_are_not_shared_between_dtypes(tiny_model_dir: Path, store: RecordStore) -> None:
    """A fp16 and a fp32 judge are different judges (their verdicts may differ)."""
    keys = {
        dtype: judgment_key(
            CachedModel(f"hf:{tiny_model_dir}", {"dtype": dtype}, store), "t", {}, MESSAGES, 0
        )
        for dtype in ("float16", "float32")
    }
    assert keys["float16"] != keys["float32"]


def test_recipe_calls_survive_a_changed_timeout(tmp_path: Path) -> None:
    """The recipes' cache keys follow the same rule: a new timeout still finds the stored answers."""

    def key(options: dict[str, str]) -> str:
        settings = GeneratorSettings(
            spec="openai:gpt-4o-mini@http://127.0.0.1:9/v1",
            cache=tmp_path / "c.sqlite",
            options=options,
            config=GenerationConfig(),
        )
        with CachedGenerator(settings, "stage", ["rolegpt_system_en.j2"]) as generator:
            return generator.key(Job("j", MESSAGES))

    assert key({"timeout": "30"}) == key({"timeout": "5", "max_retries": "1"})


def test_the_spec_parser_round_trips() -> None:
    for text in (
        "hf:org/m@rev",
        "peft:base@r1+./lora@r2",
        "openai:gpt-4o@http://h:1/v1",
        "lmeval:hf,pretrained=x",
        "baseline:rolegpt",
        "smollm2:135m",
        "vllm:org/m",
    ):
        assert str(ModelSpec.parse(text)) == text
    parsed = ModelSpec.parse("peft:base@r1+./lora@r2")
    assert (parsed.name, parsed.revision, parsed.adapter, parsed.adapter_revision) == (
        "base",
        "r1",
        "./lora",
        "r2",
    )
