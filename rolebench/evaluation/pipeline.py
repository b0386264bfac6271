"""`rolebench evaluate` as a pipeline of named steps: resolve -> claim -> generate -> play -> score -> derive.

`evaluate_run` takes the run definition (what to compute), the execution (how) and the run folder (where)
and writes the folder: run.json first (the record), each answer into the generation store as it arrives,
the session tasks' turns into their sessions files as they are played (`rolebench.evaluation.sessions`),
the scored samples files, the earlier tasks' files mended (`rolebench.evaluation.repair.repair_samples`),
then results.json derived from all of it (`rolebench.evaluation.derive`).
"""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.source import DataSource
from rolebench.evaluation.config import (
    held_protocols,
    merged_config,
    planned_config,
    timings,
    with_model_info,
)
from rolebench.evaluation.derive import write_derived
from rolebench.evaluation.generate import check_answered, generate_task
from rolebench.evaluation.guard import Planned, claim
from rolebench.evaluation.models import ModelHandle
from rolebench.evaluation.plan import TaskPlan, plan_tasks
from rolebench.evaluation.records import scored_records
from rolebench.evaluation.repair import repair_samples
from rolebench.evaluation.session_checks import check_players
from rolebench.evaluation.sessions import (
    SessionJudge,
    SessionPlan,
    check_logs,
    plan_sessions,
    play_sessions,
    session_players,
    session_settings,
    sessions_config,
)
from rolebench.judging.sets import adopt_legacy
from rolebench.results.provenance import now_iso
from rolebench.results.schema import RunResults
from rolebench.run.definition import Execution, RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.tasks.catalogue import resolve
from rolebench.tasks.sessions import split_tasks
from rolebench.tasks.spec import GroupSpec, TaskSpec


@dataclass
class Resolved:
    """A definition resolved: its tasks and groups, the data source, one plan per task, the model."""

    definition: RunDefinition
    specs: list[TaskSpec]
    groups: list[GroupSpec]
    source: DataSource
    plans: list[TaskPlan]
    model: ModelHandle
    sessions: list[SessionPlan]


def resolve_run(
    definition: RunDefinition, execution: Execution, model: ModelHandle | None = None
) -> Resolved:
    """Everything a run needs before its folder is touched: a bad task, spec, option or data file fails
    here, in one line, before any model loads."""
    single, session_tasks = split_tasks(definition.tasks)
    specs, groups = resolve(single, tuple(map(Path, definition.include_path))) if single else ([], [])
    if model is None:
        options = definition.adapter_options(execution.base_url)
        model = ModelHandle(definition.model, options, definition.model_identity(execution.base_url))
    source = resolve_source(definition.data_dir, revision=definition.revision)
    plans = plan_tasks(definition, specs, source, execution)
    sessions = plan_sessions(definition, session_tasks, source)
    return Resolved(definition, specs, groups, source, plans, model, sessions)


def continued(before: RunRecord | None, planned: Planned) -> RunRecord:
    """The record of the run going on: the new definition and plans over what the folder's run held."""
    if before is None:
        return RunRecord(planned.definition, planned.config, dict(planned.groups), now_iso())
    tasks = tuple(dict.fromkeys([*before.definition.tasks, *planned.definition.tasks]))
    return RunRecord(
        planned.definition.model_copy(update={"tasks": tasks}),
        merged_config(before.config, planned.config),
        {**before.groups, **planned.groups},
        before.created,
        dict(before.finished),
        dict(before.generation_time),
    )


def _generate(
    resolved: Resolved,
    execution: Execution,
    folder: RunFolder,
    record: RunRecord,
    cached: CachedModel,
    judge: SessionJudge | None,
) -> list[dict[str, dict[str, Any]]]:
    """The single-turn tasks' answers, then the session tasks played (their sessions files checked first,
    before any call); run.json written once nothing is left to refuse."""
    players = settings = None
    if resolved.sessions and judge is not None:
        settings = session_settings(resolved.definition, execution, judge)
        players = session_players(cached, resolved.definition, execution, judge, cached.store)
        check_logs(folder, resolved.sessions, players, settings, execution.overwrite)
    record.write(folder)
    outputs = [
        generate_task(
            plan, cached, progress=execution.progress, timed=functools.partial(record.timed, plan.spec.name)
        )
        for plan in resolved.plans
    ]
    if resolved.plans:
        check_answered(resolved.definition.model, resolved.plans, outputs, resolved.source)
    if players is None or settings is None:
        return outputs
    try:  # stalled sessions are counted from their files (`n_stalled`), and asked again by the next run
        play_sessions(resolved.sessions, players, settings, folder, execution.progress)
    finally:
        players.opponent.close()
        players.judge.close()
    return outputs


def drop_strays(folder: RunFolder, record: RunRecord) -> None:
    """Remove the samples files of tasks this run does not know (left by another run), saying so."""
    for task in folder.sample_tasks():
        if task not in record.config.tasks:
            folder.drop_samples(task)
            print(
                f"rolebench: removed samples/{task}.jsonl of {folder.path}: no task of this run (left by "
                "another run; its answers stay in the generation store)",
                file=sys.stderr,
            )


def evaluate_run(
    definition: RunDefinition,
    execution: Execution,
    folder: RunFolder,
    model: ModelHandle | None = None,
    judge: SessionJudge | None = None,
) -> RunResults:
    """Run the whole pipeline into the run folder and return the results.json written; `judge`: the
    judge of the run's session tasks (they need one, and an opponent)."""
    started = time.perf_counter()
    check_players(definition, judge.spec if judge else None)
    resolved = resolve_run(definition, execution, model)
    with folder.lock(create=True):
        adopt_legacy(folder)
        config = planned_config(definition, resolved.model.identity, resolved.source, resolved.plans)
        if resolved.sessions:
            config.sessions = sessions_config(definition, resolved.sessions, judge)
        planned = Planned(definition, config, {g.name: list(g.members) for g in resolved.groups})
        before = claim(folder, planned, execution.overwrite)
        record = continued(before, planned)
        drop_strays(folder, record)
        protocols = held_protocols(definition, record.config)
        with folder.generation_store() as store:
            cached = resolved.model.cached(store)
            try:
                outputs = _generate(resolved, execution, folder, record, cached, judge)
                info = cached.info()
            finally:
                cached.close()
        generated = time.perf_counter()
        for task, rows in scored_records(resolved.plans, outputs, protocols).items():
            record.wrote(task, folder.write_samples(task, rows))
        record.config = with_model_info(record.config, info)
        record.config.timings = timings(started, generated, time.perf_counter())
        record.write(folder)
        for line in repair_samples(folder, record, execution):  # the earlier tasks' files
            print(f"rolebench: {line}", file=sys.stderr)
        return write_derived(folder, record)
