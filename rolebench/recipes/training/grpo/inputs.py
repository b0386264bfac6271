"""What the GRPO recipe trains: the start model and its tokenizer, the prompts, and whether TRL's
checkpoints in OUTPUT may be resumed (see `rolebench.recipes.training.grpo.recipe`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigError, MissingDependency, first_line
from rolebench.recipes.training.grpo.config import GrpoConfig
from rolebench.recipes.training.trained import BaseSpec, as_plain_weights
from rolebench.storage.files import write_json_atomic

TRAINER_DIR = "trainer"
RUN_CONFIG = "run_config.json"
# TRL settings that do not change what a checkpoint holds (a run may resume with other values)
RESUMABLE = {"max_steps", "num_train_epochs", "save_steps", "save_strategy", "logging_steps", "disable_tqdm"}


def start_spec(config: GrpoConfig, base: BaseSpec) -> str:
    """The start as a model spec: `hf:BASE`, or `peft:BASE+ADAPTER`."""
    if config.model.adapter:
        return f"peft:{base.spec_part}+{Path(config.model.adapter).expanduser().resolve()}"
    return f"hf:{base.spec_part}"


def load_start(config: GrpoConfig, base: BaseSpec) -> tuple[Any, Any, Any, bool]:
    """(model, tokenizer, the new LoRA's config or None when an adapter is continued, whether the
    tokenizer came with the adapter and so travels with the result)."""
    try:
        import torch
        from peft import LoraConfig, PeftModel
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependency("rolebench recipe grpo", "torch, transformers and peft", "train") from None
    adapter = Path(config.model.adapter).expanduser() if config.model.adapter else None
    own_tokenizer = adapter is not None and (adapter / "tokenizer_config.json").is_file()
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            str(adapter) if own_tokenizer else base.name, **({} if own_tokenizer else base.hub_kwargs())
        )
        model: Any = as_plain_weights(
            AutoModelForCausalLM.from_pretrained(
                base.name, dtype=getattr(torch, config.model.dtype), **base.hub_kwargs()
            ),
            base,
        )
        if adapter is not None:
            model = PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
    except (OSError, ValueError) as error:
        raise ConfigError(
            f"cannot load the start model: {first_line(error)}",
            where="model.base and model.adapter" if adapter is not None else "model.base",
            fix="name a model folder or Hub id (and a LoRA adapter folder made for it)",
        ) from None
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            f"{config.model.base} has no chat template",
            where="model.base",
            fix="start from a chat model, or from a RoCIT adapter trained with model.chat_template",
        )
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    lora = config.lora
    peft_config = None
    if adapter is None:
        peft_config = LoraConfig(
            r=lora.r,
            lora_alpha=lora.alpha,
            lora_dropout=lora.dropout,
            target_modules=lora.target_modules,
            task_type="CAUSAL_LM",
        )
    return model, tokenizer, peft_config, own_tokenizer


def training_prompts(config: GrpoConfig) -> Any:
    """The configured splits' prompts, each split once (read before any model loads: bad data fails fast)."""
    from datasets import concatenate_datasets

    from rolebench.rewards.prompts import load_prompts, split_ids

    data = config.data
    ids = list(dict.fromkeys(split for name in data.splits for split in split_ids(name)))
    parts = [
        load_prompts(
            split,
            data.part,
            data.data_dir,
            data.limit,
            data.elicitation,
            shots=data.shots,
            allow_test=data.allow_test,
            seed=data.seed,
        )
        for split in ids
    ]
    return concatenate_datasets(parts) if len(parts) > 1 else parts[0]


def for_template(dataset: Any, tokenizer: Any) -> Any:
    """The prompts as the chat template takes them: a system turn it refuses (or drops) is merged into
    the user turn, exactly as the `hf:` adapter does when evaluating."""
    from model_adapters.chat import merge_system, probe_system_role

    render = lambda messages: str(tokenizer.apply_chat_template(messages, tokenize=False))  # noqa: E731
    if probe_system_role(render) == "merged":
        return dataset.map(lambda row: {"prompt": merge_system(row["prompt"])})
    return dataset


def run_identity(config: GrpoConfig) -> dict[str, Any]:
    """What TRL's checkpoints must agree with to be resumed (not the step budget or the evaluation)."""
    grpo = {k: v for k, v in config.grpo.items() if k not in RESUMABLE}
    identity: dict[str, Any] = json.loads(
        json.dumps(
            {
                "model": config.model.model_dump(),
                "data": config.data.model_dump(),
                "reward": config.reward.model_dump(),
                "lora": config.lora.model_dump(),
                "grpo": grpo,
            },
            default=str,
        )
    )
    return identity


def resume_point(config: GrpoConfig) -> str | None:
    """The latest TRL checkpoint of this config in OUTPUT/trainer (None: start afresh); a ConfigError
    when OUTPUT holds checkpoints of another config."""
    output = Path(config.output_dir)
    trainer_dir = output / TRAINER_DIR
    steps = {int(p.name[11:]): p for p in trainer_dir.glob("checkpoint-*") if p.name[11:].isdigit()}
    latest = str(steps[max(steps)]) if steps else None
    recorded = output / RUN_CONFIG
    if latest is not None and recorded.is_file():
        if json.loads(recorded.read_text(encoding="utf-8")) != run_identity(config):
            raise ConfigError(
                f"{trainer_dir} holds checkpoints written by a different config",
                where="output_dir",
                fix="use another output_dir, or delete that folder to start afresh",
            )
    write_json_atomic(recorded, run_identity(config))
    return latest
