"""`rolebench score`: add a protocol's numbers to a saved run (no model needed), keeping everything else."""

from __future__ import annotations

from pathlib import Path

from rolebench.evaluation.assemble import rebuild
from rolebench.evaluation.folder import samples_tasks
from rolebench.evaluation.pipeline import scoring_config
from rolebench.evaluation.records import add_scores
from rolebench.results.io import read_results, read_samples, stale_tasks, write_results, write_samples
from rolebench.results.provenance import command_line, now_iso
from rolebench.results.schema import GroupResult, RunResults, SampleRecord, TaskResult
from rolebench.scoring.aggregate import BootstrapSettings, GroupDef, aggregate_run
from rolebench.scoring.protocols import ScoringProtocol, get_protocol, protocols_for


def held_protocols(results: RunResults, added: str) -> list[ScoringProtocol]:
    """The run's protocols after adding one: its headline first, then every other it holds, then `added`."""
    headline = str(results.config.scoring.get("protocol") or added)
    held = list(results.config.scoring.get("protocols") or {})
    return protocols_for(headline, [*held, added])


def rescore(run_dir: Path, protocol_name: str, bootstrap: BootstrapSettings | None = None) -> RunResults:
    """Score a run's saved samples under `protocol_name` and add its numbers to results.json: the
    headline values, the other protocols' numbers, the timings and the judge's fields are kept.
    Every protocol the run holds is scored again from the saved answers (fast, and identical)."""
    previous = read_results(run_dir)
    protocols = held_protocols(previous, get_protocol(protocol_name).name)
    boot = bootstrap or BootstrapSettings(**previous.config.bootstrap)
    records: dict[str, list[SampleRecord]] = {}
    splits = {}
    for task, old in previous.results.items():
        splits[task] = old.split
        records[task] = add_scores(read_samples(run_dir, task), old.split, protocols, protocols[0].name)
    limits = {
        task: (old.lengths.max_new_tokens if old.lengths else None) for task, old in previous.results.items()
    }
    groups = [GroupDef(name, tuple(g.tasks)) for name, g in previous.groups.items()]
    spec = str(previous.config.model.get("spec") or "")
    fresh_tasks, fresh_groups = aggregate_run(records, splits, groups, protocols, boot, limits, spec)
    tasks = {
        t: TaskResult(**{**previous.results[t].model_dump(), **r.model_dump()})
        for t, r in fresh_tasks.items()
    }
    merged_groups = {
        name: GroupResult(**{**previous.groups[name].model_dump(), **g.model_dump()})
        for name, g in fresh_groups.items()
    }
    config = previous.config.model_copy(
        update={
            "scoring": scoring_config(protocols),
            "bootstrap": boot.describe(),
            "rescored": {"at": now_iso(), "command": command_line(), "added": protocol_name},
        }
    )
    results = RunResults(created=previous.created, config=config, results=tasks, groups=merged_groups)
    for task, rows in records.items():
        results.results[task].samples_sha256 = write_samples(run_dir, task, rows)
    write_results(run_dir, results)
    return results


def repair(run_dir: Path) -> list[str]:
    """Make results.json agree with the samples files again after an interrupted write: a task whose
    samples file is not the one it was computed from, or a samples file it does not list, is computed
    again from the samples (one run.json does not know is removed); the tasks that disagreed."""
    results = read_results(run_dir)
    stale = stale_tasks(run_dir, results)
    stale += [task for task in samples_tasks(run_dir) if task not in results.results]
    if stale:
        rebuild(run_dir, results)
    return stale
