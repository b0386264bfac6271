"""Repairs: the one step that mends a run folder, named, asked for by each command that reads a run and
reported by it (`repair_run`; `evaluate` runs its samples part, `repair_samples`, after generating).

What it mends: judgments an older rolebench wrote, moved into judge folders; a finished task's missing or
damaged samples file, rebuilt from the generation store (no model is loaded); a samples file that is not
the one the run wrote (an interrupted write) or that lacks a protocol the run holds, scored again (and
results.json derived again with them, so a command that fails next leaves no file out of step). Deriving
results.json (`rolebench.evaluation.derive`) only reads these files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.source import DataSource
from rolebench.data.splits import get_split
from rolebench.errors import DataError
from rolebench.evaluation.derive import write_derived
from rolebench.evaluation.generate import generate_task
from rolebench.evaluation.guard import data_files
from rolebench.evaluation.plan import plan_tasks
from rolebench.evaluation.records import add_scores, fully_scored, scored_records
from rolebench.judging.sets import adopt_legacy
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.run.definition import Execution
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.scoring.protocols import held_protocols
from rolebench.tasks.catalogue import resolve


def repair_run(folder: RunFolder, *, score: bool = True) -> tuple[RunRecord, list[str]]:
    """The run a folder holds, repaired for a command that reads it (call under its lock, once per
    command), and one line for each repair made, for the command to report. One DataError line when the
    folder holds no run. `score=False`: the samples files are left for the command to score (`rolebench
    score` scores every one again itself)."""
    adopt_legacy(folder)
    record = open_run(folder)
    lines = restore_samples(folder, record)
    stale = results_note(folder, record)  # before any samples file is scored again
    if score:
        scored = score_files(folder, record)
        if scored:
            write_derived(folder, record, scored)  # results.json kept in step with the files scored again
    return record, lines + ([stale] if stale else [])


def repair_samples(folder: RunFolder, record: RunRecord, execution: Execution | None = None) -> list[str]:
    """The samples part of the repairs (what `evaluate` runs after writing its own tasks' files): lost
    files rebuilt from the generation store, files the run did not write scored again; the lines."""
    lines = restore_samples(folder, record, execution)
    score_files(folder, record)
    return lines


def open_run(folder: RunFolder) -> RunRecord:
    """The run record a folder holds (read only); one DataError line when it holds no run."""
    record = RunRecord.read(folder)
    if record is None:
        if folder.results_path.is_file():
            folder.read_results()  # a damaged results.json says what is wrong with it
        raise DataError(
            "no run here (no run.json and no results.json)",
            where=str(folder.path),
            fix="pass a run folder written by `rolebench evaluate`",
        )
    return record


def results_note(folder: RunFolder, record: RunRecord) -> str | None:
    """What a damaged or out-of-date results.json (an interrupted write) lacked, as the line saying it is
    derived again; None when it matches the samples files as they are now."""
    if not folder.results_path.is_file():
        return None
    try:
        before: RunResults = folder.read_results()
    except DataError as exc:
        return f"results.json was damaged ({exc.what}): derived again from the run's files"
    stale = [
        task
        for task in record.finished_tasks()
        if task not in before.results or before.results[task].samples_sha256 != folder.samples_digest(task)
    ]
    if not stale:
        return None
    return (
        f"results.json did not match the samples of {', '.join(stale)} (an interrupted write): derived "
        "again from the run's files"
    )


def score_files(
    folder: RunFolder, record: RunRecord, *, rescore: bool = False
) -> dict[str, list[SampleRecord]]:
    """Score again, and write, each finished task's samples file that lacks a protocol the run holds or
    is not the file the run wrote (every one with `rescore`: `rolebench score`); the records written, by
    task (for deriving results.json without reading them again)."""
    protocols = held_protocols(record.definition.protocol, record.config.scoring)
    splits = record.splits()
    written = {}
    for task in record.finished_tasks():
        rows = folder.read_samples(task)
        changed = record.finished.get(task) != folder.samples_digest(task)
        if rescore or changed or not fully_scored(rows, protocols):
            rows = add_scores(rows, get_split(splits[task]), protocols, protocols[0].name)
            record.wrote(task, folder.write_samples(task, rows))
            written[task] = rows
    if written:
        record.write(folder)
    return written


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
    is loaded); one DataError line naming the file when it cannot be. A line for each file rebuilt."""
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
    rebuilt = []
    protocols = held_protocols(definition.protocol, record.config.scoring)
    for task, rows in scored_records(plans, outputs, protocols).items():
        record.wrote(task, folder.write_samples(task, rows))
        rebuilt.append(f"rebuilt samples/{task}.jsonl of {folder.path} from the generation store")
    record.write(folder)
    return rebuilt


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
