"""The `grpo` section of a GRPO config: TRL's own `GRPOConfig` settings, each checked before any model
loads: its name (TRL's, with a suggestion for a typo; not one the recipe sets), its value against the
type TRL declares (strictly: a string is not a number, `"maybe"` not a bool; numbers finite) and, for
the settings whose bad values TRL or torch would reject only mid-training, their range.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ConfigDict, TypeAdapter, ValidationError

from rolebench.errors import ConfigError
from rolebench.recipes.training.trained import require_libraries

TRL_DOCS = "https://huggingface.co/docs/trl/grpo_trainer"
# GRPOConfig fields the recipe sets itself (from the top level of the config).
RECIPE_OWNED = {"output_dir": "set `output_dir` at the top level of the config"}
# Types TRL's __post_init__ widens beyond what it declares.
WIDER_TYPES: dict[str, Any] = {"scale_rewards": str | bool}
STRICT = ConfigDict(strict=True, allow_inf_nan=False)


class Range(NamedTuple):
    holds: Callable[[Any], bool]
    text: str


_POSITIVE = Range(lambda v: v > 0, "above 0")
_NOT_NEGATIVE = Range(lambda v: v >= 0, "0 or more")
_ONE_OR_MORE = Range(lambda v: v >= 1, "1 or more")
_PROBABILITY = Range(lambda v: 0 <= v <= 1, "between 0 and 1")
_BETA = Range(lambda v: 0 <= v < 1, "at least 0 and below 1")
RANGES: dict[str, Range] = {
    "learning_rate": _POSITIVE,
    "num_train_epochs": _POSITIVE,
    "max_steps": Range(lambda v: v == -1 or v >= 1, "1 or more (or -1: train by num_train_epochs)"),
    "per_device_train_batch_size": _ONE_OR_MORE,
    "per_device_eval_batch_size": _ONE_OR_MORE,
    "gradient_accumulation_steps": _ONE_OR_MORE,
    "warmup_steps": _NOT_NEGATIVE,
    "weight_decay": _NOT_NEGATIVE,
    "adam_beta1": _BETA,
    "adam_beta2": _BETA,
    "adam_epsilon": _POSITIVE,
    "max_grad_norm": _NOT_NEGATIVE,
    "label_smoothing_factor": _BETA,
    "logging_steps": _POSITIVE,
    "save_steps": _POSITIVE,
    "eval_steps": _POSITIVE,
    "save_total_limit": _ONE_OR_MORE,
    "seed": Range(lambda v: 0 <= v < 2**32, "between 0 and 2**32 - 1"),
    "data_seed": Range(lambda v: 0 <= v < 2**32, "between 0 and 2**32 - 1"),
    "dataloader_num_workers": _NOT_NEGATIVE,
    "num_generations": Range(lambda v: v >= 2, "2 or more (GRPO compares the answers to each prompt)"),
    "num_generations_eval": _ONE_OR_MORE,
    "max_completion_length": _ONE_OR_MORE,
    "generation_batch_size": _ONE_OR_MORE,
    "steps_per_generation": _ONE_OR_MORE,
    "num_iterations": _ONE_OR_MORE,
    "temperature": _POSITIVE,
    "top_p": Range(lambda v: 0 < v <= 1, "above 0 and at most 1"),
    "top_k": _NOT_NEGATIVE,
    "min_p": _PROBABILITY,
    "repetition_penalty": _POSITIVE,
    "beta": _NOT_NEGATIVE,
    "epsilon": _POSITIVE,
    "epsilon_high": _POSITIVE,
    "delta": _POSITIVE,
    "top_entropy_quantile": _PROBABILITY,
    "entropy_coef": _NOT_NEGATIVE,
    "ref_model_mixup_alpha": _PROBABILITY,
    "ref_model_sync_steps": _ONE_OR_MORE,
}


@cache
def trl_types() -> dict[str, Any]:
    """TRL's `GRPOConfig` settings (its own and `transformers.TrainingArguments`'): name -> declared type."""
    require_libraries("rolebench recipe grpo", "trl")
    from trl.trainer.grpo_config import GRPOConfig

    hints = typing.get_type_hints(GRPOConfig)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(GRPOConfig) if f.init}


@cache
def _validator(name: str) -> TypeAdapter[Any]:
    return TypeAdapter(WIDER_TYPES.get(name, trl_types()[name]), config=STRICT)


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def check_setting(name: str, value: Any, path: Path | str) -> None:
    """ConfigError naming `grpo.NAME` for a setting TRL does not take, or a value of the wrong type
    or out of range."""
    known = trl_types()
    if name in RECIPE_OWNED:
        raise ConfigError(f"grpo.{name} is set by the recipe", where=str(path), fix=RECIPE_OWNED[name])
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=1)
        raise ConfigError(
            f"unknown GRPO setting grpo.{name}",
            where=str(path),
            fix=(f"did you mean {close[0]!r}? " if close else "")
            + f"the grpo section takes the fields of TRL's GRPOConfig ({TRL_DOCS})",
        )
    try:
        _validator(name).validate_python(value)
    except ValidationError as exc:
        raise ConfigError(
            f"invalid GRPO config: grpo.{name}: {exc.errors()[0]['msg']}, not {_shown(value)}",
            where=str(path),
            fix=f"TRL declares {name} as {_type_name(known[name])} ({TRL_DOCS})",
        ) from None
    rule = RANGES.get(name)
    if rule is not None and isinstance(value, int | float) and not rule.holds(value):
        raise ConfigError(
            f"invalid GRPO config: grpo.{name}: {_shown(value)} is out of range",
            where=str(path),
            fix=f"give {name} a value {rule.text}",
        )


def check_settings(settings: Mapping[str, Any], path: Path | str) -> None:
    for name, value in settings.items():
        check_setting(name, value, path)


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    return text or str(annotation).replace("typing.", "")
