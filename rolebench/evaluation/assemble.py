"""A run's results from its samples: the tasks run now and those the folder keeps, and a damaged or
incomplete results.json rebuilt from run.json, the samples files and the generation store.

`assemble` is the one place task and group results are computed from samples for a run folder:
`rolebench evaluate` calls it with the tasks it just ran (the folder's other tasks are kept: their
results are computed again from their samples files, fields such as the judge's carried over);
`rebuild` calls it with nothing new, for `rolebench score` on a damaged results.json and for the repair
after an interrupted write.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from rolebench.cached_model import stored_info
from rolebench.errors import DataError
from rolebench.evaluation.folder import OWNER_FILE, Owner, Previous, merged_config, previous_run
from rolebench.evaluation.generate import GENERATIONS_FILE, GENERATIONS_TABLE
from rolebench.evaluation.records import add_scores
from rolebench.judge.run import JUDGMENTS_DIR
from rolebench.results.io import RESULTS_FILE, read_samples, samples_path, write_results, write_samples
from rolebench.results.provenance import command_line, now_iso
from rolebench.results.schema import GroupResult, RunConfig, RunResults, SampleRecord, TaskResult
from rolebench.scoring.aggregate import (
    BootstrapSettings,
    GroupDef,
    aggregate_run,
    group_results,
    split_totals,
)
from rolebench.scoring.protocols import DEFAULT_PROTOCOL, ScoringProtocol, protocols_for
from rolebench.storage.records import RecordStore


def present_groups(groups: Mapping[str, Sequence[str]], tasks: Sequence[str]) -> list[GroupDef]:
    """The groups whose every member is a task present or a group kept (groups of groups included)."""
    known, kept = set(tasks), list[GroupDef]()
    pending = dict(groups)
    while True:
        ready = [name for name, members in pending.items() if all(m in known for m in members)]
        if not ready:
            return kept
        for name in ready:
            kept.append(GroupDef(name, tuple(pending.pop(name))))
            known.add(name)


def assemble(
    output: Path,
    fresh: Mapping[str, list[SampleRecord]],
    previous: Previous,
    protocols: Sequence[ScoringProtocol],
    boot: BootstrapSettings,
    *,
    model_spec: str = "",
    groups: Mapping[str, Sequence[str]] = {},
    rescore: bool = False,
) -> RunResults:
    """Write the samples files of `fresh` (task -> scored records, their splits and caps in `previous`)
    and compute every task and group of the folder's run (config left empty: the caller fills it).
    A kept task keeps its result when it is the one of its samples file under every protocol; else
    (and always when `rescore`) it is computed again from its samples, scored again if need be."""
    digests = {task: write_samples(output, task, rows) for task, rows in fresh.items()}
    records, reused = dict(fresh), {}
    before = previous.results.results if previous.results is not None else {}
    for task in previous.kept:
        if task in fresh:
            continue
        if not rescore and task in before and _current(output, task, before[task], protocols):
            reused[task] = before[task]
        else:
            rows, digests[task] = _kept(output, task, previous.splits[task], protocols, rescore)
            records[task] = rows
    order = [t for t in before if t in records or t in reused]
    order += [t for t in previous.splits if (t in records or t in reused) and t not in order]
    order += [t for t in records if t not in order]
    splits = {t: previous.splits[t] for t in order}
    computed, _ = aggregate_run(
        {t: records[t] for t in order if t in records},
        splits,
        [],
        protocols,
        boot,
        {t: previous.limits.get(t) for t in order},
        model_spec,
    )
    for task, result in computed.items():
        result.samples_sha256 = digests[task]
    tasks = {t: computed.get(t) or reused[t] for t in order}
    defs = present_groups({**previous.groups, **groups}, order)
    group_values = group_results(defs, tasks, [p.name for p in protocols], model_spec)
    members = {m for g in defs for m in g.members if m in tasks}
    grouped = {t: records[t] if t in records else read_samples(output, t) for t in members}
    split_totals(defs, splits, grouped, protocols, group_values)
    results = RunResults(created=now_iso(), config=RunConfig(), results=tasks, groups=group_values)
    if previous.results is not None:
        _carry_over(results, previous.results, [t for t in order if t not in fresh])
    return results


def _current(output: Path, task: str, result: TaskResult, protocols: Sequence[ScoringProtocol]) -> bool:
    """Whether a kept task's result is the one of its samples file, under every protocol the run holds."""
    path = samples_path(output, task)
    return (
        result.samples_sha256 is not None
        and path.is_file()
        and file_sha256(path) == result.samples_sha256
        and all(result.value(p.name) is not None for p in protocols)
    )


def _kept(
    output: Path, task: str, split: str, protocols: Sequence[ScoringProtocol], rescore: bool
) -> tuple[list[SampleRecord], str]:
    """A kept task's records (scored again, and written again then) and the digest of its file."""
    rows = read_samples(output, task)
    if not rescore and all(p.name in r.protocol_scores for r in rows for p in protocols):
        return rows, file_sha256(samples_path(output, task))
    rows = add_scores(rows, split, protocols, protocols[0].name)
    return rows, write_samples(output, task, rows)


def _carry_over(results: RunResults, before: RunResults, kept: Sequence[str]) -> None:
    """Fields the samples do not give (the judge's) stay on the kept tasks and on groups of kept tasks."""
    for task in kept:
        if task in before.results:
            merged = {**before.results[task].model_dump(), **results.results[task].model_dump()}
            results.results[task] = TaskResult(**merged)
    for name, group in results.groups.items():
        old = before.groups.get(name)
        if old is not None and all(m in kept or m in before.groups for m in group.tasks):
            if all(leaf in kept for leaf in _leaves(name, before)):
                results.groups[name] = GroupResult(**{**old.model_dump(), **group.model_dump()})
    if any(results.results[t].value("win_rate") is not None for t in kept):
        results.config.judge = before.config.judge


def _leaves(name: str, results: RunResults) -> list[str]:
    group = results.groups.get(name)
    if group is None:
        return [name]
    return [leaf for member in group.tasks for leaf in _leaves(member, results)]


def with_model_info(config: RunConfig, info: Mapping[str, Any]) -> RunConfig:
    """A run's config with what the model said about itself (name, revision, chat template...)."""
    model = {**info, **config.model}
    prompt = {
        **config.prompt,
        "system_role": info.get("system_role", "system"),
        "chat_template_sha256": info.get("chat_template_sha256"),
    }
    return config.model_copy(update={"model": model, "prompt": prompt})


def rebuild(run_dir: Path, results: RunResults | None = None) -> RunResults:
    """results.json made again from run.json, the samples files and the generation store (`results`: the
    one the folder holds, when readable; its fields the samples do not give are kept)."""
    owner = Owner.read(run_dir)
    if results is None and owner.config is None:
        raise DataError(
            f"{RESULTS_FILE} is damaged and {OWNER_FILE} does not record the run's settings (an older "
            "rolebench wrote it)",
            where=str(run_dir),
            fix="run the same `rolebench evaluate` command with --overwrite: it reuses the stored answers",
        )
    before = merged_config(owner.config, results.config) if results and owner.config else None
    config = before or (results.config if results is not None else owner.config) or RunConfig()
    previous = previous_run(run_dir, results, owner, config)
    previous.groups = {**owner.groups, **previous.groups}
    headline = str(config.scoring.get("protocol") or DEFAULT_PROTOCOL)
    held = set(previous.protocols) | {name for task in previous.kept for name in _protocols_in(run_dir, task)}
    protocols = protocols_for(headline, sorted(held))
    boot = BootstrapSettings(**config.bootstrap) if config.bootstrap else BootstrapSettings()
    spec = str(config.model.get("spec") or "")
    rebuilt = assemble(run_dir, {}, previous, protocols, boot, model_spec=spec, rescore=True)
    rebuilt.config = merged_config(None, config, tasks=rebuilt.results)
    if results is not None:
        rebuilt.created = results.created
    else:
        rebuilt.config = with_model_info(rebuilt.config, _model_info(run_dir, owner))
        rebuilt.config.rebuilt = {
            "at": now_iso(),
            "command": command_line(),
            "from": f"{OWNER_FILE}, samples/*.jsonl, {GENERATIONS_FILE}",
        }
        if (run_dir / JUDGMENTS_DIR).is_dir():
            print(
                f"rolebench: the judge's win rates are not in the rebuilt {RESULTS_FILE}: run `rolebench "
                f"judge {run_dir} --judge SPEC` again (its verdicts are cached: no new calls)",
                file=sys.stderr,
            )
    write_results(run_dir, rebuilt)
    return rebuilt


def _protocols_in(run_dir: Path, task: str) -> set[str]:
    rows = read_samples(run_dir, task)
    return set(rows[0].protocol_scores) if rows else set()


def _model_info(run_dir: Path, owner: Owner) -> dict[str, Any]:
    """What the model said about itself, as the generation store remembers it ({} if it does not)."""
    path = run_dir / GENERATIONS_FILE
    if owner.identity is None or not path.is_file():
        return {}
    with RecordStore(path, GENERATIONS_TABLE) as store:
        return stored_info(store, owner.identity) or {}
