"""From per-sample scores to task, per-role and group results (means with bootstrap intervals).

Every protocol a run holds is aggregated the same way into its own block (`TaskResult.<protocol>`);
the headline protocol's block is also copied to the top level of each task and group. A protocol
with a number of its own for a whole split (OpenCompass's pooled one) adds it to the group. A task
whose samples carry the train join also gets its numbers on the unseen items (`unseen`: the items
whose question is not in the split's train file), under the headline protocol.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolebench.data.splits import SplitDef
from rolebench.results.schema import GroupResult, SampleRecord, TaskResult, Unseen
from rolebench.results.scoring_settings import BootstrapSettings
from rolebench.scoring.answers import answer_lengths
from rolebench.scoring.context import context_cost
from rolebench.scoring.flags import (
    BELOW_FLOOR,
    answer_flags,
    below_floor,
    sorted_flags,
    verbatim,
    verbatim_flags,
)
from rolebench.scoring.floors import FLOOR_SPECS, floor_scores, group_floors
from rolebench.scoring.metrics import AVG, METRIC_KEYS, metrics_for
from rolebench.scoring.protocols import ScoringProtocol
from rolebench.scoring.remembered import items_digest
from rolebench.scoring.stats import (
    bootstrap_ci,
    mean,
    mean_of_available,
)


@dataclass(frozen=True)
class GroupDef:
    """A group of tasks, as aggregation needs it."""

    name: str
    members: tuple[str, ...]


def _values(records: Sequence[SampleRecord], protocol: str, metric: str) -> list[float]:
    found = []
    for record in records:
        value = record.protocol_scores.get(protocol, {}).get(metric)
        if value is not None:
            found.append(value)
    return found


def protocol_block(
    split: SplitDef, records: Sequence[SampleRecord], protocol: str, boot: BootstrapSettings
) -> dict[str, Any]:
    """One protocol's metric fields of a task: the mean, its interval and its n, per metric."""
    fields: dict[str, Any] = {}
    for metric in metrics_for(split.kind):
        values = _values(records, protocol, metric.key)
        ci = bootstrap_ci(values, resamples=boot.resamples, confidence=boot.confidence, seed=boot.seed)
        fields[metric.key] = mean(values)
        fields[f"{metric.key}_ci"] = list(ci) if ci else None
        fields[f"{metric.key}_n"] = len(values)
    fields["per_role"] = per_role(split, records, protocol)
    return fields


def per_role(split: SplitDef, records: Sequence[SampleRecord], protocol: str) -> dict[str, dict[str, Any]]:
    by_role: dict[str, list[SampleRecord]] = defaultdict(list)
    for record in records:
        by_role[record.role].append(record)
    keys = [m.key for m in metrics_for(split.kind)]
    return {
        role: {"n": len(rows), **{k: mean(_values(rows, protocol, k)) for k in keys}}
        for role, rows in sorted(by_role.items())
    }


def unseen_block(split: SplitDef, records: Sequence[SampleRecord], protocol: str) -> Unseen | None:
    """A task's numbers on the items whose question is not in the split's train file, under `protocol`
    (None when the records do not carry the train join: the split's train file was not read)."""
    if not records or any(r.in_train is None for r in records):
        return None
    unseen = [r for r in records if r.in_train is False]
    fields: dict[str, Any] = {}
    for metric in metrics_for(split.kind) if unseen else ():
        values = _values(unseen, protocol, metric.key)
        fields[metric.key], fields[f"{metric.key}_n"] = mean(values), len(values)
    return Unseen(n=len(unseen), **fields)


def flags_of(
    values: Mapping[str, Any],
    floors: Mapping[str, Any],
    protocol: str | None,
    model_spec: str = "",
    inherited: Sequence[str] = (),
) -> list[str]:
    """A task's or group's flags (`rolebench.scoring.flags`): its lengths' and copying's flags, or its
    members' (`inherited`), and `below-floor` when a headline value is at or below a floor. A floor run
    is neither below a floor nor a copier of references: it is what others are held against."""
    floor = model_spec in FLOOR_SPECS
    found = [*inherited, *answer_flags(values.get("lengths"))]
    found += [] if floor else verbatim_flags(values.get("verbatim"))
    if protocol and not floor and below_floor(values, floors, protocol):
        found.append(BELOW_FLOOR)
    return sorted_flags(found)


def task_result(
    split: SplitDef,
    records: Sequence[SampleRecord],
    protocols: Sequence[ScoringProtocol],
    boot: BootstrapSettings,
    max_new_tokens: int | None = None,
    model_spec: str = "",
) -> TaskResult:
    """A task's result: the headline protocol (the first) at the top, every protocol in its own block,
    the floors on the same items and the flags."""
    headline = protocols[0].name
    blocks = {p.name: protocol_block(split, records, p.name, boot) for p in protocols}
    generated = sum(1 for r in records if r.output is not None)
    lengths = answer_lengths(records, max_new_tokens)
    items = items_digest(records)  # what the remembered floors and copying shares follow from
    copying = verbatim(records, items)
    floors = floor_scores(split, records, protocols, items)
    measured = {"lengths": lengths.model_dump(), "verbatim": copying.model_dump()}
    flags = flags_of({**blocks[headline], **measured}, floors, headline, model_spec)
    return TaskResult(
        split=split.id,
        n=len(records),
        n_generated=generated,
        n_not_covered=len(records) - generated,
        n_failed=sum(1 for r in records if r.failed),
        n_baseline=sum(1 for r in records if r.baseline is not None),
        protocol=headline,
        lengths=lengths,
        context=context_cost(records),
        verbatim=copying,
        unseen=unseen_block(split, records, headline),
        **blocks[headline],
        **blocks,
        floors=floors,
        flags=flags,
    )


def _group_block(members: Sequence[Mapping[str, Any]], nested: bool) -> dict[str, Any]:
    values = {m: mean_of_available([x.get(m) for x in members]) for m in METRIC_KEYS}
    avg = (
        mean_of_available([x.get(AVG) for x in members])
        if nested
        else mean_of_available([values[m] for m in METRIC_KEYS])
    )
    return {**values, AVG: avg}


def group_results(
    groups: Sequence[GroupDef],
    tasks: Mapping[str, TaskResult],
    protocols: Sequence[str] = (),
    model_spec: str = "",
) -> dict[str, GroupResult]:
    """Groups in dependency order: each metric is the mean over the members that have it; `avg` is the
    mean of the group's available CUS, RAW and SPE (groups of groups: the members' avg). `protocols`:
    the protocol blocks to aggregate besides the top-level (headline) values. Floors are aggregated
    the same way; a group carries its members' flags, and `below-floor` for its own values."""
    done: dict[str, GroupResult] = {}
    pending = list(groups)
    while pending:
        group = next(g for g in pending if all(m in tasks or m in done for m in g.members))
        pending.remove(group)
        members = [(tasks.get(m) or done[m]).model_dump() for m in group.members]
        nested = all(m in done for m in group.members)
        fields = _group_block(members, nested)
        for name in protocols:
            fields[name] = _group_block([x.get(name) or {} for x in members], nested)
        headline = next((x.get("protocol") for x in members if x.get("protocol")), None)
        floors = group_floors(members, nested)
        inherited = [flag for x in members for flag in x.get("flags") or []]
        flags = flags_of(fields, floors, headline, model_spec, inherited)
        done[group.name] = GroupResult(
            tasks=list(group.members),
            n=sum(x.get("n", 0) for x in members),
            protocol=headline,
            **fields,
            floors=floors,
            flags=flags,
        )
    return done


def split_totals(
    groups: Sequence[GroupDef],
    splits: Mapping[str, SplitDef],
    records: Mapping[str, Sequence[SampleRecord]],
    protocols: Sequence[ScoringProtocol],
    done: dict[str, GroupResult],
) -> None:
    """Add each protocol's own split number (e.g. OpenCompass's pooled one) to the groups of one
    general and one role-specific task, as `<protocol>_total` in its block (and at the top level
    when it is the headline protocol)."""
    for group in groups:
        kinds = {splits[m].kind: m for m in group.members if m in splits}
        if len(group.members) != 2 or set(kinds) != {"general", "role_specific"}:
            continue
        general, specific = records[kinds["general"]], records[kinds["role_specific"]]
        language = splits[kinds["general"]].language
        for protocol in protocols:
            total = protocol.split_total(
                _scores(general, protocol.name, "cus"), _scores(specific, protocol.name, "spe"), language
            )
            if total is None:
                continue
            result = done[group.name]
            block = dict(result.value(protocol.name) or {}, **{f"{protocol.name}_total": total})
            extra: dict[str, Any] = {protocol.name: block}
            if result.protocol == protocol.name:
                extra[f"{protocol.name}_total"] = total
            done[group.name] = GroupResult(**{**result.model_dump(), **extra})


def _scores(records: Sequence[SampleRecord], protocol: str, metric: str) -> list[float | None]:
    return [r.protocol_scores.get(protocol, {}).get(metric) for r in records]


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


def aggregate_run(
    records: Mapping[str, Sequence[SampleRecord]],
    splits: Mapping[str, SplitDef],
    groups: Mapping[str, Sequence[str]],
    protocols: Sequence[ScoringProtocol],
    boot: BootstrapSettings,
    max_new_tokens: Mapping[str, int | None] | None = None,
    model_spec: str = "",
) -> tuple[dict[str, TaskResult], dict[str, GroupResult]]:
    """Task and group results of a run from its scored samples (task -> records, task -> split); `groups`:
    the run's groups (name -> members), each aggregated when all its members are (`present_groups`).
    `model_spec`: the run's model (a floor run is not flagged below its own floor)."""
    limits = max_new_tokens or {}
    tasks = {
        task: task_result(splits[task], rows, protocols, boot, limits.get(task), model_spec)
        for task, rows in records.items()
    }
    present = present_groups(groups, list(records))
    done = group_results(present, tasks, [p.name for p in protocols], model_spec)
    split_totals(present, splits, records, protocols, done)
    return tasks, done
