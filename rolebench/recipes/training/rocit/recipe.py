"""RoCIT end to end: load the base, add LoRA, train (resumable), save the adapter, evaluate it.

OUTPUT (the config's `output_dir`) ends up holding
- `adapter/`: the final LoRA adapter (`save_pretrained`), plus the tokenizer when the config gave
  the chat template, so `peft:BASE+OUTPUT/adapter` evaluates with the very prompt format it was
  trained on (otherwise the base's own tokenizer is that format);
- `checkpoints/`, `train_log.jsonl`, `train_summary.json` (see `rolebench.recipes.training.rocit.train`);
- `eval/step-N/`: `rolebench evaluate` run folder of the adapter trained for N steps (a retrained
  adapter never reuses another's generations); `eval-base/`: the untrained base, same settings.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigError, MissingDependency
from rolebench.recipes.training.rocit.config import RocitConfig
from rolebench.recipes.training.rocit.data import build_examples, prepare_tokenizer
from rolebench.recipes.training.rocit.train import run_loop
from rolebench.recipes.training.trained import (
    LOG_FILE,
    BaseSpec,
    evaluate_models,
    require_libraries,
    resolve_base,
    save_adapter,
    write_summary,
)


@dataclass
class RocitReport:
    steps: int = 0
    first_loss: float | None = None
    last_loss: float | None = None
    adapter: Path | None = None
    data_line: str = ""
    evaluations: dict[str, Any] = field(default_factory=dict)  # label -> RunResults


def load_model_for_training(config: RocitConfig, base: BaseSpec) -> tuple[Any, Any]:
    """(the base with LoRA layers, the tokenizer with a chat template and a pad token)."""
    try:
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependency("rolebench recipe rocit", "torch, transformers and peft", "train") from None
    tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(base.name, **base.hub_kwargs()), config)
    model: Any = AutoModelForCausalLM.from_pretrained(
        base.name, dtype=getattr(torch, config.model.dtype), **base.hub_kwargs()
    )
    if config.training.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    lora = LoraConfig(
        r=config.lora.r,
        lora_alpha=config.lora.alpha,
        lora_dropout=config.lora.dropout,
        target_modules=config.lora.target_modules,
        task_type="CAUSAL_LM",
    )
    try:
        model = get_peft_model(model, lora)
    except ValueError as error:
        raise ConfigError(
            f"cannot add LoRA: {error}".splitlines()[0],
            where="lora.target_modules",
            fix="name modules of this architecture (e.g. q_proj, v_proj)",
        ) from None
    return model, tokenizer


def logged_losses(output: Path) -> list[float]:
    import json

    path = output / LOG_FILE
    if not path.is_file():
        return []
    return [
        json.loads(line)["loss"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def train(config: RocitConfig, *, progress: bool = True) -> tuple[RocitReport, BaseSpec, bool]:
    """Train (or finish training) and save the adapter; (report, base, whether this is the main process)."""
    import torch

    if config.training.cpu_threads:
        torch.set_num_threads(config.training.cpu_threads)
    torch.manual_seed(config.training.seed)
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    base = resolve_base(config.model.base, config.model.revision, config.model.gguf_file)
    model, tokenizer = load_model_for_training(config, base)
    examples, data_report = build_examples(config, tokenizer)
    state = run_loop(config, model, examples, tokenizer.pad_token_id, progress)
    report = RocitReport(steps=state.step, data_line=data_report.line())
    if state.is_main:
        # the tokenizer travels with the adapter only when it differs from the base's (its chat template)
        report.adapter = save_adapter(state.model, tokenizer if config.model.chat_template else None, output)
        losses = logged_losses(output)
        report.first_loss, report.last_loss = (losses[0], losses[-1]) if losses else (None, None)
        write_summary(
            output,
            {
                "name": config.name,
                "base": base.spec_part,
                "gguf_file": base.gguf_file,
                "steps": state.step,
                "examples": data_report.examples,
                "data": data_report.line(),
                "first_loss": report.first_loss,
                "last_loss": report.last_loss,
                "seconds_this_run": round(time.perf_counter() - started, 1),
                "config": config.model_dump(),
            },
        )
    del model, state
    gc.collect()
    return report, base, bool(report.adapter)


def evaluate_trained(
    config: RocitConfig, base: BaseSpec, adapter: Path, steps: int, *, progress: bool = True
) -> dict[str, Any]:
    """`rolebench evaluate` of the adapter (and of the base when `include_base`): label -> results."""
    output = Path(config.output_dir)
    runs = {"adapter": (f"peft:{base.spec_part}+{adapter.resolve()}", output / "eval" / f"step-{steps}")}
    if config.evaluate.include_base:
        runs["base"] = (f"hf:{base.spec_part}", output / "eval-base")
    return evaluate_models(config.evaluate, config.data.data_dir, runs, base, progress=progress)


def run_rocit(config: RocitConfig, *, progress: bool = True, evaluate: bool = True) -> RocitReport:
    """Train, save, then (main process only) evaluate the adapter on the configured tasks."""
    require_libraries("rolebench recipe rocit")
    report, base, is_main = train(config, progress=progress)
    if evaluate and is_main and report.adapter is not None:
        report.evaluations = evaluate_trained(config, base, report.adapter, report.steps, progress=progress)
    return report
