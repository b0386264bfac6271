"""`evaluate`'s options, read into the run definition, the execution and the judge (`split_options`), and
how the Python API names them in its errors (`python_api`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from rolebench.errors import ConfigError, RoleBenchError, in_python_terms
from rolebench.judging.settings import JudgeSettings
from rolebench.run.definition import Execution, RunDefinition
from rolebench.settings_model import Int, SettingsModel, setting


def _as_in_judge(name: str) -> Any:
    """`rolebench judge`'s own field (default, help, checks), for `evaluate --judge`'s same setting."""
    return JudgeSettings.model_fields[name]


class EvaluateJudge(SettingsModel):
    """`evaluate --judge`: the judge, and its settings under `evaluate`'s names."""

    judge: str | None = setting(
        None,
        "judge model spec: the win rate against the RoleGPT baseline (single-turn tasks); in session tasks "
        "it plays the user and picks the better answer each turn",
        group="judge",
    )
    judge_limit: Int | None = _as_in_judge("judge_limit")
    judge_base_url: str | None = setting(None, "OpenAI-compatible server URL for the judge", group="judge")
    judge_config: str = _as_in_judge("judge_config")
    price_table: Path | None = _as_in_judge("price_table")

    def settings(self, definition: RunDefinition, execution: Execution) -> JudgeSettings:
        return JudgeSettings(
            judge_limit=self.judge_limit,
            base_url=self.judge_base_url,
            judge_config=self.judge_config,
            price_table=self.price_table,
            seed=definition.seed,
            concurrency=execution.concurrency,
            progress=execution.progress,
        )


EVALUATE_OPTIONS = (RunDefinition, Execution, EvaluateJudge)


def split_options(
    options: Mapping[str, Any], where: str, *, flag_style: bool = False
) -> tuple[RunDefinition, Execution, EvaluateJudge]:
    """`evaluate`'s options into the run definition, the execution and the judge (one line for a bad one;
    `flag_style`: named as the command line's flags)."""
    known = {name for cls in EVALUATE_OPTIONS for name in cls.model_fields}
    unknown = [key for key in options if key not in known]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        raise ConfigError(
            f"unknown option {unknown[0]!r}",
            where=where,
            fix=(f"did you mean {close[0]!r}? " if close else "") + "see `rolebench evaluate --help`",
        )
    parts = [{k: v for k, v in options.items() if k in cls.model_fields} for cls in EVALUATE_OPTIONS]
    definition = RunDefinition.read(parts[0], where, flag_style=flag_style)
    execution = Execution.read(parts[1], where, flag_style=flag_style)
    return definition, execution, EvaluateJudge.read(parts[2], where, flag_style=flag_style)


def python_options() -> dict[str, str]:
    """How each option of the Python API is written (`data_dir=`, `overwrite=True`), by name."""
    fields = {n: f for cls in (*EVALUATE_OPTIONS, JudgeSettings) for n, f in cls.model_fields.items()}
    return {n: f"{n}=True" if f.annotation in (bool, "bool") else f"{n}=" for n, f in fields.items()}


Call = TypeVar("Call", bound=Callable[..., Any])


def python_api(function: Call) -> Call:
    """A function of the Python API: its errors name its options, not the command's flags
    (`rolebench.errors.in_python_terms`; a command that calls it keeps its flags)."""

    @functools.wraps(function)
    def named(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except RoleBenchError as error:
            in_python_terms(error, python_options())
            raise

    return cast(Call, named)
