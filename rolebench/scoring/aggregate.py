"""From per-sample scores to task, per-role and group metrics (means with bootstrap intervals)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolebench.data.splits import get_split
from rolebench.results.schema import GroupResult, TaskResult
from rolebench.scoring.protocols import ScoringProtocol, opencompass_order
from rolebench.scoring.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    bootstrap_ci,
    mean,
    mean_of_available,
)
from rolebench.tasks.catalogue import GroupSpec

METRICS = ("cus", "raw", "spe")


@dataclass(frozen=True)
class BootstrapSettings:
    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0

    def describe(self) -> dict[str, Any]:
        return {"resamples": self.resamples, "confidence": self.confidence, "seed": self.seed}


def _values(records: Sequence[Mapping[str, Any]], metric: str) -> list[float]:
    return [r["scores"][metric] for r in records if r["scores"].get(metric) is not None]


def task_result(split: str, records: Sequence[Mapping[str, Any]], boot: BootstrapSettings) -> TaskResult:
    """Metrics of one task from its sample records (each with `scores`, `role`, `output`)."""
    fields: dict[str, Any] = {}
    for metric in get_split(split).metrics:
        values = _values(records, metric)
        ci = bootstrap_ci(values, resamples=boot.resamples, confidence=boot.confidence, seed=boot.seed)
        fields[metric] = mean(values)
        fields[f"{metric}_ci"] = list(ci) if ci else None
        fields[f"{metric}_n"] = len(values)
    by_role: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_role[record["role"]].append(record)
    per_role = {
        role: {"n": len(rows), **{m: mean(_values(rows, m)) for m in get_split(split).metrics}}
        for role, rows in sorted(by_role.items())
    }
    generated = sum(1 for r in records if r.get("output") is not None)
    return TaskResult(
        split=split,
        n=len(records),
        n_generated=generated,
        n_not_covered=len(records) - generated,
        per_role=per_role,
        **fields,
    )


def _member_metrics(name: str, results: Mapping[str, TaskResult], groups: Mapping[str, GroupResult]) -> dict:
    source = results.get(name) or groups.get(name)
    return {} if source is None else source.model_dump()


def group_results(specs: Sequence[GroupSpec], results: Mapping[str, TaskResult]) -> dict[str, GroupResult]:
    """Groups in dependency order: each metric is the mean over members that have it;
    `avg` is the mean of the group's available CUS, RAW and SPE (groups of groups: the members' avg)."""
    done: dict[str, GroupResult] = {}
    pending = list(specs)
    while pending:
        spec = next(s for s in pending if all(m in results or m in done for m in s.members))
        pending.remove(spec)
        members = [_member_metrics(m, results, done) for m in spec.members]
        values = {m: mean_of_available([x.get(m) for x in members]) for m in METRICS}
        nested = all(m in done for m in spec.members)
        avg = (
            mean_of_available([x.get("avg") for x in members])
            if nested
            else mean_of_available([values[m] for m in METRICS])
        )
        done[spec.name] = GroupResult(
            tasks=list(spec.members), n=sum(x.get("n", 0) for x in members), avg=avg, **values
        )
    return done


def opencompass_total(
    protocol: ScoringProtocol,
    split: str,
    general: Sequence[Mapping[str, Any]],
    specific: Sequence[Mapping[str, Any]],
) -> float | None:
    """OpenCompass's one number for a split: its general and role-specific samples pooled in its shuffled
    order and aggregated its way (`ScoringProtocol.aggregate`); None if any sample has no output."""
    pooled = [r["scores"].get("cus") for r in general] + [r["scores"].get("spe") for r in specific]
    if not pooled or any(v is None for v in pooled):
        return None
    return protocol.aggregate([pooled[i] for i in opencompass_order(len(pooled))], get_split(split).language)


def aggregate_run(
    records: Mapping[str, Sequence[Mapping[str, Any]]],
    splits: Mapping[str, str],
    groups: Sequence[GroupSpec],
    protocol: ScoringProtocol,
    boot: BootstrapSettings,
) -> tuple[dict[str, TaskResult], dict[str, GroupResult]]:
    """Task and group results of a run from its scored sample records (task -> records, task -> split).

    Under the `opencompass` protocol a group of one general and one role-specific task also gets
    `opencompass_total`, the number OpenCompass prints for that split (as a fraction).
    """
    tasks = {task: task_result(splits[task], rows, boot) for task, rows in records.items()}
    done = group_results(groups, tasks)
    if protocol.name == "opencompass":
        for spec in groups:
            kinds = {get_split(splits[m]).kind: m for m in spec.members if m in splits}
            if len(spec.members) == 2 and set(kinds) == {"general", "role_specific"}:
                total = opencompass_total(
                    protocol,
                    splits[kinds["general"]],
                    records[kinds["general"]],
                    records[kinds["role_specific"]],
                )
                done[spec.name] = GroupResult(**{**done[spec.name].model_dump(), "opencompass_total": total})
    return tasks, done
