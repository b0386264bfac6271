"""results.json, derived from what the run folder holds: the one function that writes it, and the one file
it writes.

`derive_results` reads the run record (run.json: the definition, the config as planned, the groups), every
samples file of the run's tasks, and every set of judgments (against the RoleGPT baseline, one per
judge; against other runs, one per opponent), and computes the whole document from them. No command
merges into results.json or carries another command's fields over: `evaluate`, `judge` and `score` each
write their own files (samples, judgments, the record), then call this. So none can drop another's
results, and a damaged results.json is rebuilt by running any of them (or `rolebench score DIR`).

A session task's numbers come from its sessions file (and a second judge's verdicts on the same turns),
as `rolebench.sessions.results` reads them: `sessions[task]` and `config.sessions[task]`.

Reading never writes: a samples file that is lost, damaged, not the one the run wrote or lacking a protocol
the run holds is mended before this runs, by the repair step a command asks for
(`rolebench.evaluation.repair`); a file left unmended is scored here in memory, never written. Tasks the
record planned but that never finished (an interrupted first run) have no samples file and are not in the
results until `evaluate` finishes them.
"""

from __future__ import annotations

from collections.abc import Mapping

from rolebench.data.splits import get_split
from rolebench.errors import DataError
from rolebench.evaluation.config import scoring_config
from rolebench.evaluation.records import add_scores, fully_scored
from rolebench.judging.results import judged_results
from rolebench.results.provenance import now_iso
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.scoring.aggregate import aggregate_run
from rolebench.scoring.context import with_throughput
from rolebench.scoring.protocols import held_protocols
from rolebench.sessions.results import session_results


def derive_results(
    folder: RunFolder, record: RunRecord, read: Mapping[str, list[SampleRecord]] | None = None
) -> RunResults:
    """The run's results.json document, from the folder's files (see the module docstring); it writes
    nothing. `read`: the samples records the caller holds, by task, read or written under the folder's lock
    this command holds (not read again)."""
    tasks = record.finished_tasks()
    ids, caps = record.splits(), {task: record.max_new_tokens(task) for task in tasks}
    boot = record.definition.bootstrap_settings()
    sessions, played = session_results(folder, record.config.sessions or {}, boot.resamples, boot.seed)
    if not tasks and not sessions:
        planned = sorted(record.config.sessions or {})
        raise DataError(
            "this run has no results yet (it was interrupted before any task finished"
            + (f", or the sessions files of {', '.join(planned)} were removed)" if planned else ")"),
            where=str(folder.path),
            fix="run the same `rolebench evaluate` command again to resume it (stored calls are reused)",
        )
    spec = record.definition.model
    splits = {task: get_split(ids[task]) for task in tasks}
    protocols = held_protocols(record.definition.protocol, record.config.scoring)
    records, digests = {}, {}
    for task in tasks:
        records[task] = list(read[task]) if read and task in read else folder.read_samples(task)
        digests[task] = str(folder.samples_digest(task))
        if record.finished.get(task) != digests[task] or not fully_scored(records[task], protocols):
            # not scored as the run holds it (the repairs were not asked for): scored here, in memory
            records[task] = add_scores(records[task], splits[task], protocols, protocols[0].name)
    results, grouped = aggregate_run(records, splits, record.groups, protocols, boot, caps, spec)
    for task, result in results.items():
        result.samples_sha256 = digests[task]
        timing = record.generation_time.get(task)
        if timing and result.context is not None:
            result.context = with_throughput(result.context, int(timing["answers"]), timing["seconds"])
    update = {"scoring": scoring_config(protocols), "bootstrap": boot.describe(), "sessions": played or None}
    config = record.config.model_copy(update=update, deep=True)
    derived = RunResults(
        created=record.created or now_iso(), config=config, results=results, groups=grouped, sessions=sessions
    )
    return judged_results(derived, folder.judgment_sets(), records)


def write_derived(
    folder: RunFolder, record: RunRecord, read: Mapping[str, list[SampleRecord]] | None = None
) -> RunResults:
    """Derive results.json and write it (atomically), the one file it writes; the document written.
    `read`: the samples records the caller holds, by task, read or written under the folder's lock
    this command holds (not read again)."""
    results = derive_results(folder, record, read)
    folder.write_results(results)
    return results
