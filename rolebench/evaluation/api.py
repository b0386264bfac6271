"""The Python API: `evaluate`, `judge`, `score`, `read_results`; the command line is a thin layer over them.

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

It is the evaluation package's one door for the commands, the sweep and the recipes too: `split_options`
(evaluate's options into their records), `evaluate_definition`, `judge_folder`, `refresh` (a run repaired,
its results.json derived again), `plan_run` (what a run will ask), `checked_judge`, `default_run_folder`;
for session tasks, `check_players` (an opponent and a judge that can play), `session_facts` (what a sweep's
key holds of a session task), `unjudged_turns` (a second judge's turns still to ask).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigTypeError, kind_of
from rolebench.evaluation.derive import write_derived
from rolebench.evaluation.models import ModelHandle, model_handle
from rolebench.evaluation.options import EVALUATE_OPTIONS as EVALUATE_OPTIONS
from rolebench.evaluation.options import EvaluateJudge as EvaluateJudge
from rolebench.evaluation.options import python_api
from rolebench.evaluation.options import split_options as split_options
from rolebench.evaluation.pipeline import Resolved, evaluate_run, resolve_run
from rolebench.evaluation.repair import repair_run, score_files
from rolebench.evaluation.session_checks import check_players as check_players
from rolebench.evaluation.session_judge import judge_sessions
from rolebench.evaluation.session_judge import unjudged_turns as unjudged_turns
from rolebench.evaluation.sessions import SessionJudge
from rolebench.evaluation.sessions import session_facts as session_facts
from rolebench.judging.outcomes import read_failure_line
from rolebench.judging.run import judge_run, prepare_judge
from rolebench.judging.sets import set_of
from rolebench.judging.settings import JudgeSettings
from rolebench.judging.versus import judge_versus
from rolebench.results.schema import RunResults
from rolebench.run.definition import Execution, RunDefinition, default_output
from rolebench.run.elicitation import Elicitation
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.scoring.protocols import get_protocol
from rolebench.tasks.sessions import split_tasks


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

    Session tasks (`rpbench_character`, `rpbench_scene`, `rolebench_eng_sessions`,
    `rolebench_zh_sessions`, the groups `rpbench` and `rolebench_sessions`; a list may mix them with
    single-turn tasks) play several turns against `opponent` (a model spec; `opponent_args`,
    `opponent_base_url` as for the model), with `judge` playing the user and picking the better answer
    each turn (`turns`, 5 by default), as RPBench-Auto does:

        results = rolebench.evaluate("openai:my-model@http://127.0.0.1:8000/v1", "rpbench", limit=10,
                                     opponent="openai:gpt-4o-mini", judge="openai:gpt-4o", turns=5)
        results.sessions["rpbench_character"].win_rate

    Every turn is kept in the run folder as it is played (`sessions/<task>.jsonl`) and a rerun resumes;
    `results.sessions[task]` holds the win rate with its interval, ties, failures and position bias
    (`n_stalled`: sessions a failed call stopped, played on by the next run), and
    `results.config.sessions[task]` who played, judged and on what.

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
    """`evaluate` of a checked definition (what a sweep's job runs): generate, play the session tasks, and
    score, then judge the single-turn tasks when a judge is given (a bad judge, or session tasks without
    an opponent or a judge, fail before any generation)."""
    settings = settings or JudgeSettings()
    check_players(definition, judge)
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
    folder = RunFolder(Path(str(execution.output)))  # set: by the caller, or a temporary folder
    session_judge = SessionJudge(judge, settings) if judge else None
    results = evaluate_run(definition, execution, folder, model, session_judge)
    single_turn = split_tasks(definition.tasks)[0]
    # the judge played the sessions: its pass after evaluating is on the single-turn tasks only
    return judge_folder(folder, judge, settings, sessions=False) if judge and single_turn else results


def plan_run(definition: RunDefinition, execution: Execution) -> Resolved:
    """What a run will ask, before any folder is touched or model loaded: the data, and the run's parts
    planned (`Resolved.calls()`: each task's requests or turns); a bad task, option or data file fails
    here."""
    return resolve_run(definition, execution)


def checked_judge(
    judging: EvaluateJudge, definition: RunDefinition, execution: Execution
) -> JudgeSettings | None:
    """The settings of `evaluate --judge`, its judge checked but not what it needs from this machine (a key,
    a server that answers: a sweep's job checks those where it runs); None without a judge."""
    if not judging.judge:
        return None
    settings = judging.settings(definition, execution)
    prepare_judge(judging.judge, settings, environment=False)
    return settings


def default_run_folder(model: str, elicitation: Any = None, shots: Any = None) -> Path:
    """The command line's run folder when none is given: runs/<model>, one folder per few-shot method (a
    bad method is refused, naming it)."""
    return default_output(model, Elicitation.parse(elicitation, shots))


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
    folder: RunFolder,
    judge: str,
    settings: JudgeSettings,
    against: RunFolder | None = None,
    *,
    sessions: bool = True,
) -> RunResults:
    """`judge` on a run folder with checked settings (what `evaluate --judge` runs after evaluating, with
    `sessions=False`: the judge that played the sessions does not judge them again).

    The judge's own settings are checked first; what it needs from this machine (a key, a server that
    answers) after the run and its opponent, so a wrong folder is named before a missing key."""
    prepare_judge(judge, settings, environment=False)
    with folder.lock():
        record = repaired(folder)
        records = {task: folder.read_samples(task) for task in record.finished_tasks()}
        if against is None:
            judge_run(folder, records, judge, settings)
            for line in judge_sessions(folder, judge, settings) if sessions else ():  # a second judge
                print(line)
        else:
            judge_versus(folder, records, against, judge, settings)
        return write_derived(folder, record, records)  # the samples as read above, under the same lock


@python_api
def score(run: str | Path, protocol: str | None = None) -> RunResults:
    """Score a run's saved answers again (no model needed), adding `protocol`'s numbers when given
    (`rolellm`, `rolebench` or `opencompass`), and return its results. A damaged results.json is rebuilt,
    and a finished task's missing or damaged samples file is rebuilt from the generation store."""
    if protocol is not None:
        get_protocol(protocol)
    folder = run_folder(run, "run", "rolebench.score")
    with folder.lock():
        record = repaired(folder, score=False)  # every samples file is scored again below
        if protocol is not None:
            record.add_protocol(protocol, get_protocol(protocol).describe())
            record.write(folder)
        return write_derived(folder, record, score_files(folder, record, rescore=True))


def refresh(folder: RunFolder) -> RunResults:
    """The run repaired (each repair said on stderr) and its results.json derived again (call under the
    folder's lock): what `rolebench report` does before it draws the page."""
    return write_derived(folder, repaired(folder))


def repaired(folder: RunFolder, *, score: bool = True) -> RunRecord:
    """The run a folder holds after the repair step (call under its lock, once per command), each repair
    it made said on stderr (`score=False`: the command scores the samples files itself)."""
    record, lines = repair_run(folder, score=score)
    for line in lines:
        print(f"rolebench: {line}", file=sys.stderr)
    return record


@python_api
def judgment_failures(run: Path, block: dict[str, Any] | None) -> str | None:
    """Why pairs of the judging `block` (a judge.json, as results.json's config shows it) got no verdict,
    with the first reason of each kind and the judgments' folder (None: every pair that could be judged
    was, or no judging)."""
    if not block:
        return None
    judgments = set_of(RunFolder(run), block)
    failed = read_failure_line(judgments)
    return f"{failed}; see {judgments.folder}" if failed else None


def read_results(run: str | Path) -> RunResults:
    """The results of a run folder (or of a results.json file)."""
    from rolebench.run.folder import read_results as read

    return read(run_folder(run, "run", "rolebench.read_results").path)


__all__ = ["evaluate", "judge", "read_results", "score"]
