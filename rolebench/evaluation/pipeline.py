"""`rolebench evaluate` as a pipeline of named steps: resolve -> claim -> generate -> score -> derive.

`evaluate_run` takes the run definition (what to compute) and the execution (how, where) and writes the
run folder: run.json first (the record), each answer into the generation store as it arrives, the scored
samples files, then results.json derived from all of it (`rolebench.evaluation.derive`).
`restore_samples` rebuilds a finished task's missing or damaged samples file from the generation store
(no model is loaded), for every command that reads a run.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.source import DataSource
from rolebench.errors import DataError
from rolebench.evaluation.config import (
    held_protocols,
    merged_config,
    planned_config,
    timings,
    with_model_info,
)
from rolebench.evaluation.derive import write_derived
from rolebench.evaluation.generate import check_answered, generate_task
from rolebench.evaluation.guard import Planned, claim, data_files
from rolebench.evaluation.models import ModelHandle
from rolebench.evaluation.plan import TaskPlan, plan_tasks
from rolebench.evaluation.records import add_scores, sample_record
from rolebench.judging.sets import adopt_legacy
from rolebench.results.provenance import now_iso
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.run.definition import Execution, RunDefinition, default_output
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.scoring.protocols import ScoringProtocol
from rolebench.tasks.catalogue import resolve
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


def resolve_run(
    definition: RunDefinition, execution: Execution, model: ModelHandle | None = None
) -> Resolved:
    """Everything a run needs before its folder is touched: a bad task, spec, option or data file fails
    here, in one line, before any model loads."""
    specs, groups = resolve(list(definition.tasks), tuple(map(Path, definition.include_path)))
    if model is None:
        options = definition.adapter_options(execution.base_url)
        model = ModelHandle(definition.model, options, definition.model_identity(execution.base_url))
    source = resolve_source(definition.data_dir, revision=definition.revision)
    return Resolved(
        definition, specs, groups, source, plan_tasks(definition, specs, source, execution), model
    )


def scored_records(
    plans: Sequence[TaskPlan],
    outputs: Sequence[dict[str, dict[str, Any]]],
    protocols: Sequence[ScoringProtocol],
) -> dict[str, list[SampleRecord]]:
    """Every sample of the tasks run now, scored under every protocol the run holds."""
    records: dict[str, list[SampleRecord]] = {}
    for plan, generated in zip(plans, outputs, strict=True):
        unscored = [
            sample_record(s, r.messages, generated[r.id], n)
            for s, r, n in zip(plan.samples, plan.requests, plan.shots, strict=True)
        ]
        records[plan.spec.name] = add_scores(unscored, plan.spec.split.id, protocols, protocols[0].name)
    return records


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
    definition: RunDefinition, execution: Execution, model: ModelHandle | None = None
) -> RunResults:
    """Run the whole pipeline into the run folder and return the results.json written."""
    started = time.perf_counter()
    resolved = resolve_run(definition, execution, model)
    folder = RunFolder(execution.output or default_output(definition.model, definition.elicitation_method()))
    with folder.lock(create=True):
        adopt_legacy(folder)
        planned = Planned(
            definition,
            planned_config(
                definition,
                resolved.model.identity,
                resolved.source,
                resolved.plans,
                held_protocols(definition, None),
            ),
            {g.name: list(g.members) for g in resolved.groups},
        )
        before = claim(folder, planned, execution.overwrite)
        record = continued(before, planned)
        drop_strays(folder, record)
        record.write(folder)
        protocols = held_protocols(definition, record.config)
        with folder.generation_store() as store:
            cached = resolved.model.cached(store)
            try:
                outputs = [
                    generate_task(
                        plan,
                        cached,
                        progress=execution.progress,
                        timed=functools.partial(record.timed, plan.spec.name),
                    )
                    for plan in resolved.plans
                ]
                check_answered(definition.model, resolved.plans, outputs, resolved.source)
                info = cached.info()
            finally:
                cached.close()
        generated = time.perf_counter()
        for task, rows in scored_records(resolved.plans, outputs, protocols).items():
            record.wrote(task, folder.write_samples(task, rows))
        record.config = with_model_info(record.config, info)
        record.config.timings = timings(started, generated, time.perf_counter())
        record.write(folder)
        restore_samples(folder, record, execution)
        return write_derived(folder, record)


def recorded_source(record: RunRecord) -> DataSource:
    """The data the run read, as its record names it (local folder, Hub revision, or packaged build)."""
    data = record.config.data
    if data.get("kind") == "local" and data.get("location"):
        return resolve_source(str(data["location"]))
    if data.get("kind") == "hub" and data.get("location"):
        return resolve_source(repo=str(data["location"]), revision=data.get("revision"))
    return resolve_source(record.definition.data_dir, revision=record.definition.revision)


def restore_samples(folder: RunFolder, record: RunRecord, execution: Execution | None = None) -> list[str]:
    """Rebuild every finished task's missing or damaged samples file from the generation store (no model
    is loaded); one DataError line naming the file when it cannot be. The tasks rebuilt."""
    broken = [task for task in record.finished_tasks() if not _readable(folder, record, task)]
    if not broken:
        return []
    definition = record.definition.model_copy(update={"tasks": tuple(broken)})
    how = execution or Execution(progress=False)
    try:
        source = recorded_source(record)
        specs, _ = resolve(broken, tuple(map(Path, definition.include_path)))
        plans = plan_tasks(definition, specs, source, how)
    except DataError as exc:
        raise _unrebuildable(folder, broken, f"its data cannot be read ({exc.what})") from None
    changed = _changed_files(record, source)
    if changed:
        raise _unrebuildable(folder, broken, f"the data changed since the run ({', '.join(changed)})")
    identity = record.config.model.get("identity") or definition.model_identity()
    with folder.generation_store() as store:
        cached = CachedModel.stored(definition.model, identity, store)  # the answers of the run's model
        outputs = [generate_task(plan, cached, progress=False, stored_only=True) for plan in plans]
    for plan, generated in zip(plans, outputs, strict=True):
        missing = len(plan.requests) - len(generated)
        if missing:
            raise _unrebuildable(folder, [plan.spec.name], f"{missing} of its answers are not in the store")
    for task, rows in scored_records(plans, outputs, held_protocols(definition, record.config)).items():
        record.wrote(task, folder.write_samples(task, rows))
        print(
            f"rolebench: rebuilt samples/{task}.jsonl of {folder.path} from the generation store",
            file=sys.stderr,
        )
    record.write(folder)
    return broken


def _readable(folder: RunFolder, record: RunRecord, task: str) -> bool:
    """Whether a task's samples file can be read: the file the run wrote (same digest), or one that
    parses (e.g. after an interrupted write; the derivation then scores it again)."""
    digest = folder.samples_digest(task)
    if digest is None:
        return False
    if digest == record.finished.get(task):
        return True
    try:
        folder.read_samples(task)
    except DataError:
        return False
    return True


def _changed_files(record: RunRecord, source: DataSource) -> list[str]:
    recorded = data_files(record.config)
    return sorted(f for f, sha in source.files.items() if recorded.get(f, sha) != sha)


def _unrebuildable(folder: RunFolder, tasks: Sequence[str], why: str) -> DataError:
    files = ", ".join(f"samples/{t}.jsonl" for t in tasks)
    return DataError(
        f"{files} is missing or damaged and cannot be rebuilt from the generation store: {why}",
        where=str(folder.path),
        fix="run the same `rolebench evaluate` command again to answer those items again",
    )


def open_run(folder: RunFolder) -> RunRecord:
    """The run a folder holds, ready for a command that reads it (call under its lock): judgments of an
    older rolebench moved into judge folders, finished tasks' missing or damaged samples rebuilt from the
    generation store. One DataError line when the folder holds no run."""
    adopt_legacy(folder)
    record = RunRecord.read(folder)
    if record is None:
        if folder.results_path.is_file():
            folder.read_results()  # a damaged results.json says what is wrong with it
        raise DataError(
            "no run here (no run.json and no results.json)",
            where=str(folder.path),
            fix="pass a run folder written by `rolebench evaluate`",
        )
    restore_samples(folder, record)
    return record


def refresh_results(folder: RunFolder, *, rescore: bool = False) -> RunResults:
    """The run's results.json derived again from its files (call under its lock), saying on stderr what a
    damaged or out-of-date one (an interrupted write) lacked; `rescore`: score every answer again."""
    record = open_run(folder)
    # the samples files as they are before this derivation (which rewrites them when it adds a protocol):
    # results.json is out of date only if it does not match these
    on_disk = {task: folder.samples_digest(task) for task in record.finished_tasks()}
    try:
        before: RunResults | None = folder.read_results() if folder.results_path.is_file() else None
        damaged = None
    except DataError as exc:
        before, damaged = None, exc
    results = write_derived(folder, record, rescore=rescore)
    if damaged is not None:
        print(
            f"rolebench: results.json was damaged ({damaged.what}): derived again from the run's files",
            file=sys.stderr,
        )
    elif before is not None:
        stale = [
            task
            for task in results.results
            if task not in before.results or before.results[task].samples_sha256 != on_disk.get(task)
        ]
        if stale:
            print(
                f"rolebench: results.json did not match the samples of {', '.join(stale)} (an interrupted "
                "write): derived again from the run's files",
                file=sys.stderr,
            )
    return results
