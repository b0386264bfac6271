"""Training-recipe configs: YAML files validated by pydantic (unknown keys, values of the wrong type,
out of range or not finite are errors), and the sections the training recipes share (LoRA, the
evaluation after training). Everything is checked before any model loads.

Shipped configs live in `rolebench/recipes/training/configs/`, named by their stem: GRPO's start with
`grpo-`, the others are RoCIT's (`rolebench recipe rocit rolellama`, `rolebench recipe grpo
grpo-smoke-cpu`). Any other value is a path to a YAML file, read by the bounded YAML reader
(`rolebench.storage.yaml_files`: no alias bombs).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rolebench.errors import ConfigError
from rolebench.storage.yaml_files import read_yaml

CONFIG_DIR = Path(__file__).parent / "configs"
RECIPE_LABELS = {"rocit": "RoCIT", "grpo": "GRPO"}
PREFIXES = {"grpo": "grpo-"}  # shipped configs of a recipe other than RoCIT start with its prefix


class Section(BaseModel):
    """A config section: unknown keys refused, strict types (a string is not a number, `"maybe"` not a
    bool, a number not a string), finite numbers."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


Name = Annotated[str, Field(min_length=1)]
Seed = Annotated[int, Field(ge=0, lt=2**32)]  # numpy's range, which TRL and accelerate seed too


class LoraSection(Section):
    r: int = Field(8, ge=1)
    alpha: int = Field(16, ge=1)
    dropout: float = Field(0.05, ge=0.0, lt=1.0)
    target_modules: Annotated[list[Name], Field(min_length=1)] | Name = Field(
        default_factory=lambda: ["q_proj", "v_proj"]
    )


class EvaluateSection(Section):
    """`evaluate:` of a training config: `rolebench evaluate` of the trained model (and, with
    `include_base`, of the model it started from) right after training. Besides `enabled` and
    `include_base`, its keys are `rolebench evaluate`'s own options by flag name (`tasks`, `limit`,
    `max_new_tokens`, `batch_size`, `model_args`, `elicitation`, ...), read into the run definition
    (`rolebench.run.definition.RunDefinition`) directly; the model, its run folder and the data are the
    recipe's. No `tasks`: no evaluation."""

    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)
    enabled: bool = True
    include_base: bool = Field(False, description="also evaluate the untrained base with the same settings")

    def options(self) -> dict[str, Any]:
        """The section's `rolebench evaluate` options (`model_options`: the earlier name of `model_args`)."""
        extra = dict(self.model_extra or {})
        if "model_options" in extra:
            extra["model_args"] = extra.pop("model_options")
        return extra

    @property
    def tasks(self) -> list[str]:
        value = self.options().get("tasks") or []
        return [value] if isinstance(value, str) else [str(task) for task in value]

    def check(self, path: Path | str, schemes: Sequence[str]) -> None:
        """ConfigError, before any model loads, for what `rolebench evaluate` would refuse only after
        training: an option it does not know or a bad value of one, a task or group it does not know, a
        model option the evaluated backends (`schemes`: `hf`, `peft`) do not take."""
        from model_adapters.interface import AdapterBase
        from model_adapters.registry import backend
        from rolebench.evaluation.api import split_options
        from rolebench.tasks.catalogue import resolve

        options = self.options()
        for key in RECIPE_GIVES:
            if key in options:
                raise ConfigError(
                    f"invalid config: evaluate.{key} is the recipe's (it evaluates what it trained)",
                    where=str(path),
                    fix=f"remove evaluate.{key}",
                )
        key = "evaluate"
        try:
            definition, _, _ = split_options({**options, "model": "hf:x", "tasks": self.tasks or "x"}, key)
            definition.checked(in_memory=True)
            key = "evaluate.tasks"
            resolve(list(self.tasks), tuple(Path(p) for p in definition.include_path))
            key = (
                "evaluate.model_options"
                if "model_options" in (self.model_extra or {})
                else "evaluate.model_args"
            )
            for scheme in dict.fromkeys(schemes):
                adapter = backend(scheme).load_class()
                if issubclass(adapter, AdapterBase):
                    adapter.Options.parse(definition.model_args, f"{scheme}:", where=key)
        except ConfigError as error:
            raise ConfigError(
                f"invalid config: {key}: {error.what}", where=str(path), fix=error.fix
            ) from None


RECIPE_GIVES = ("model", "output", "data_dir", "overwrite")  # what the recipe sets for its evaluations


def shipped_configs(recipe: str) -> list[str]:
    """The stems of the configs shipped for `recipe` ("rocit" or "grpo")."""
    stems = sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))
    prefix = PREFIXES.get(recipe)
    if prefix is not None:
        return [s for s in stems if s.startswith(prefix)]
    return [s for s in stems if not s.startswith(tuple(PREFIXES.values()))]


def config_path(name: str, recipe: str = "rocit") -> Path:
    """A shipped config of `recipe` by stem (`rolellama`), else a file path."""
    known = shipped_configs(recipe)
    if "/" not in name and not name.endswith((".yaml", ".yml")) and name in known:
        return CONFIG_DIR / f"{name}.yaml"
    path = Path(name)
    if not path.is_file():
        close = difflib.get_close_matches(name, known, n=1)
        raise ConfigError(
            f"{RECIPE_LABELS[recipe]} config {name} not found",
            where="CONFIG",
            fix=(f"did you mean {close[0]!r}? " if close else "")
            + f"give a YAML file or a shipped config: {', '.join(known)}",
        )
    return path


Config = TypeVar("Config", bound=BaseModel)


def read_config(
    name: str, schema: type[Config], recipe: str, overrides: dict[str, Any] | None = None
) -> tuple[Config, Path]:
    """Read and validate a config (and where it was read from); `overrides` are dotted keys
    (`training.max_steps`) set after reading."""
    path = config_path(name, recipe)
    label = RECIPE_LABELS[recipe]
    raw = read_yaml(path, f"{label} config")
    if not isinstance(raw, dict):
        raise ConfigError(f"a {label} config must be a YAML mapping", where=str(path))
    for dotted, value in (overrides or {}).items():
        target = raw
        *parents, leaf = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise ConfigError(f"cannot set {dotted}: {part} is not a section", where="--set")
        target[leaf] = value
    try:
        return schema.model_validate(raw), path
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        close = []
        if first["type"] == "extra_forbidden":
            close = difflib.get_close_matches(
                str(first["loc"][-1]), _field_names(schema, first["loc"][:-1]), n=1
            )
        raise ConfigError(
            f"invalid {label} config: {where}: {first['msg']}{_given(first)}",
            where=str(path),
            fix=(f"did you mean {close[0]!r}? " if close else "")
            + f"{exc.error_count()} problem(s); see docs/RECIPES.md for the fields",
        ) from None


def _given(error: Any) -> str:
    """The value a validation error is about, when it is a short scalar (`, not 'fast'`)."""
    value = error.get("input")
    if error["type"] in ("missing", "extra_forbidden") or isinstance(value, dict | list) or value is None:
        return ""
    shown = repr(value)
    return f", not {shown}" if len(shown) <= 60 else ""


def _field_names(schema: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the section at `loc` (for a did-you-mean); none past a non-section."""
    section: Any = schema
    for part in loc:
        field = section.model_fields.get(part) if isinstance(part, str) else None
        section = field.annotation if field is not None else None
        if not (isinstance(section, type) and issubclass(section, BaseModel)):
            return []
    return list(section.model_fields)
