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
    assert model_identity("openai:gpt-4o-mini@http://127.0.0.1:8000/v1", {}) == base  # same model elsewhere
    assert model_identity("openai:gpt-4o-mini", {"base_url": "http://127.0.0.1:9/v1"}) == base
    assert model_identity("openai:gpt-4o", {}) != base


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
