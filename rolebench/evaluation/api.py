"""The Python API: `evaluate`, `judge`, `score`; the command line is a thin layer over these three.

Options are named like the command line's flags, in snake_case (`--max-new-tokens` is `max_new_tokens`,
`--no-progress` is `progress=False`); an unknown option or a bad value raises `rolebench.ConfigError`
(a `ValueError`) naming it. Each function returns the typed results record (`rolebench.results.schema.
RunResults`), equal to the results.json it writes in the run folder.

    import rolebench
    results = rolebench.evaluate("hf:HuggingFaceTB/SmolLM2-135M-Instruct", "rolebench_eng_role", limit=30)
    results.groups["rolebench_eng_role"].avg

`model` is a spec string, a transformers model and its tokenizer as `(model, tokenizer)` (a model you hold
in memory, e.g. in a training loop: its answers are those of `hf:PATH` for the same weights, and stored
answers serve only the same weights), or any object implementing the adapter protocol
(`model_adapters.ModelAdapter`: `spec`, `info()`, `generate(requests, config)`, `close()`).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from rolebench.errors import ConfigError, ConfigTypeError, RoleBenchError, in_python_terms, kind_of
from rolebench.evaluation.models import ModelHandle, model_handle
from rolebench.evaluation.pipeline import evaluate_run, open_run, refresh_results
from rolebench.judging.run import judge_run, prepare_judge
from rolebench.judging.settings import JudgeSettings
from rolebench.judging.versus import judge_versus
from rolebench.results.schema import RunResults
from rolebench.run.definition import Execution, RunDefinition, setting
from rolebench.run.folder import RunFolder
from rolebench.scoring.protocols import get_protocol
from rolebench.settings_model import Int, SettingsModel


def _as_in_judge(name: str) -> Any:
    """`rolebench judge`'s own field (default, help, checks), for `evaluate --judge`'s same setting."""
    return JudgeSettings.model_fields[name]


class EvaluateJudge(SettingsModel):
    """`evaluate --judge`: the judge, and its settings under `evaluate`'s names."""

    judge: str | None = setting(
        None, "judge model spec: compute the win rate against the RoleGPT baseline", group="judge"
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


@python_api
def evaluate(model: Any, tasks: str | Sequence[str], **options: Any) -> RunResults:
    """Evaluate `model` on RoleBench `tasks` (task or group names) and return the run's results.

    Options are `rolebench evaluate`'s flags in snake_case: what changes the numbers (`limit`,
    `limit_mode`, `limit_seed`, `protocol`, `elicitation`, `shots`, `max_new_tokens`, `temperature`,
    `top_p`, `repetition_penalty`, `seed`, `bootstrap`, `data_dir`, `revision`, `model_args`,
    `include_path`), how to run (`output`: the run folder; when omitted, a temporary one, `results.folder`,
    removed when Python exits or at once if the call fails; `batch_size`,
    `concurrency`, `base_url`, `progress`, `overwrite`) and the judge (`judge`, `judge_limit`,
    `judge_base_url`, `judge_config`, `price_table`). See `rolebench evaluate --help` for each.

    A model object that breaks the adapter protocol (yields something other than one `(request,
    Generation)` per request, a text that is not a str, a bad `info()`) raises a `ConfigTypeError` or
    `ConfigError` naming it, and nothing wrong is stored. Requests that failed (an API error: the command
    line's exit 1) are counted in `results.results[task].n_failed` and asked again by the next run.
    """
    spec, handle = model_handle(model, options.get("model_args"))
    if handle is not None:
        options = {k: v for k, v in options.items() if k != "model_args"}
    definition, execution, judging = split_options(
        {**options, "model": spec, "tasks": tasks}, "rolebench.evaluate"
    )
    definition = definition.checked(in_memory=handle is not None)
    settings = judging.settings(definition, execution)
    return evaluate_definition(definition, execution, judging.judge, settings, handle)


def evaluate_definition(
    definition: RunDefinition,
    execution: Execution,
    judge: str | None = None,
    settings: JudgeSettings | None = None,
    model: ModelHandle | None = None,
) -> RunResults:
    """`evaluate` of a checked definition (what a sweep's job runs): generate and score, then judge when a
    judge is given (a bad judge fails before any generation)."""
    settings = settings or JudgeSettings()
    if judge:
        prepare_judge(judge, settings)
    if execution.output is not None:
        return _evaluated(definition, execution, judge, settings, model)
    # a temporary run folder (made after every check passed): `results.folder` while Python runs, removed
    # when it exits, and at once when the call fails
    temporary = Path(tempfile.mkdtemp(prefix="rolebench-run-"))
    try:
        results = _evaluated(
            definition, execution.model_copy(update={"output": temporary}), judge, settings, model
        )
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    atexit.register(shutil.rmtree, temporary, ignore_errors=True)
    return results


def _evaluated(
    definition: RunDefinition,
    execution: Execution,
    judge: str | None,
    settings: JudgeSettings,
    model: ModelHandle | None,
) -> RunResults:
    results = evaluate_run(definition, execution, model)
    if judge and execution.output is not None:
        return judge_folder(RunFolder(execution.output), judge, settings)
    return results


@python_api
def run_folder(value: object, name: str, where: str) -> RunFolder:
    """The run folder an argument names (a str or a path); a ConfigTypeError naming the argument else."""
    if not isinstance(value, str | os.PathLike):
        raise ConfigTypeError(
            f"{name} is {kind_of(value)}, not a folder path", where=where, fix="pass a run folder's path"
        )
    return RunFolder(Path(value))


def judge(run: str | Path, judge: str, against: str | Path | None = None, **options: Any) -> RunResults:
    """Judge a run's saved answers with the LLM judge `judge` (a model spec): against the RoleGPT baseline,
    or, with `against` (another run folder), against that run's answers on the items both hold. Options are
    `rolebench judge`'s flags in snake_case (`judge_limit`, `concurrency`, `base_url`, `judge_args`,
    `judge_config`, `price_table`, `reparse`, `seed`, `progress`, `cache_dir`). Returns the run's results,
    the judge's fields in them. A pass never makes a result worse (a verdict it could not give again is
    kept), so what the pass itself gave is in `results.config.judge["pass"]`: `verdicts`, `no_verdict`,
    `kept` (earlier verdicts standing in) and `failed` (why; None when it gave every verdict it asked for).
    The command line exits 1 when `failed` is set."""
    settings = JudgeSettings.read(options, "rolebench.judging")
    folder = run_folder(run, "run", "rolebench.judge")
    opponent = None if against is None else run_folder(against, "against", "rolebench.judge")
    return judge_folder(folder, judge, settings, opponent)


def judge_folder(
    folder: RunFolder, judge: str, settings: JudgeSettings, against: RunFolder | None = None
) -> RunResults:
    """`judge` on a run folder with checked settings (what `evaluate --judge` runs after evaluating).

    The judge's own settings are checked first; what it needs from this machine (a key, a server that
    answers) after the run and its opponent, so a wrong folder is named before a missing key."""
    prepare_judge(judge, settings, environment=False)
    with folder.lock():
        record = open_run(folder)
        records = {task: folder.read_samples(task) for task in record.finished_tasks()}
        if against is None:
            judge_run(folder, records, judge, settings)
        else:
            judge_versus(folder, records, against, judge, settings)
        return refresh_results(folder)


@python_api
def score(run: str | Path, protocol: str | None = None) -> RunResults:
    """Score a run's saved answers again (no model needed), adding `protocol`'s numbers when given
    (`rolellm`, `rolebench` or `opencompass`), and return its results. A damaged results.json is rebuilt,
    and a finished task's missing or damaged samples file is rebuilt from the generation store."""
    if protocol is not None:
        get_protocol(protocol)
    folder = run_folder(run, "run", "rolebench.score")
    with folder.lock():
        if protocol is not None:
            record = open_run(folder)
            record.add_protocol(protocol)
            record.write(folder)
        return refresh_results(folder, rescore=True)


@python_api
def read_results(run: str | Path) -> RunResults:
    """The results of a run folder (or of a results.json file)."""
    from rolebench.run.folder import read_results as read

    return read(run_folder(run, "run", "rolebench.read_results").path)


__all__ = ["evaluate", "judge", "read_results", "score"]
