"""The judge's part of a run's results, computed from the judgments its folder holds.

Each set of judgments (`rolebench.run.folder.JudgmentSet`) is one judge's verdicts: against the RoleGPT
baseline, or against one other run. From its lines, for the items the run holds now (a line whose answer
is no longer the run's is left out), `judged_results` computes the win-rate fields of every task and,
pooled over their tasks, of every group:

A judgments file that does not read back as its judge wrote it (`JudgmentSet.lines`: the digest judge.json
records, one verdict per pair, known values) is named on stderr and left out, never counted.

- against the baseline, each judge's fields under `results[task]["judges"][NAME]` and
  `config.judges[NAME]`; one judge's also at the top (`win_rate`, ... and `config.judge`): the last one
  run that judged anything (a pass that failed whole never hides a good result);
- against another run, `results[task]["versus"][NAME]` (with `n_shared`) and `config.versus[NAME]`,
  NAME the opponent's readable name (its spec and elicitation; a digest is added when two opponents would
  share one), by the same rule when two judges judged it. Two opponents never mix: each is its own set,
  named by its identity;
- where two judges judged the run against the baseline, their agreement on the same pairs (the share of
  equal outcomes and Cohen's kappa, `rolebench.judging.agreement`) beside each one's position
  consistency, under `results[task]["judge_agreement"]["A vs B"]` and, pooled, the groups'.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolebench.errors import DataError
from rolebench.judging.agreement import agreement
from rolebench.judging.outcomes import answer_sha, judge_fields
from rolebench.results.schema import GroupResult, RunResults, SampleRecord, TaskResult
from rolebench.run.folder import JudgmentSet

VERSUS = "versus"
JUDGES = "judges"
AGREEMENT = "judge_agreement"


def current_lines(
    lines: Sequence[dict[str, Any]], records: Mapping[str, SampleRecord]
) -> list[dict[str, Any]]:
    """The lines about items the run holds now, with the answer it holds (lines of older rolebench
    versions, without the answer's digest, are taken as they are)."""
    kept = []
    for line in lines:
        record = records.get(str(line.get("id")))
        if record is None:
            continue
        if "output_sha" in line and line["output_sha"] != answer_sha(record.output):
            continue
        kept.append(line)
    return kept


def leaf_tasks(name: str, results: RunResults, seen: tuple[str, ...] = ()) -> list[str]:
    """The tasks under a task or group name (a group's members, recursively)."""
    if name in results.results:
        return [name]
    group = results.groups.get(name)
    if group is None or name in seen:
        return []
    return [leaf for member in group.tasks for leaf in leaf_tasks(member, results, (*seen, name))]


def set_lines(
    judgments: JudgmentSet, results: RunResults, records: Mapping[str, Sequence[SampleRecord]]
) -> dict[str, list[dict[str, Any]]]:
    """A set's lines per task of the run, about the items and answers the run holds now."""
    lines: dict[str, list[dict[str, Any]]] = {}
    for task in judgments.tasks():
        if task in results.results:
            by_id = {r.id: r for r in records.get(task, [])}
            try:
                found = judgments.lines(task)
            except DataError as exc:  # named, and left out: a hand-edited verdict never counts
                print(f"rolebench: judgments left out of the results: {exc.line()}", file=sys.stderr)
                continue
            lines[task] = current_lines(found, by_id)
    return lines


def set_fields(
    lines: Mapping[str, list[dict[str, Any]]], results: RunResults, shared: bool
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """One set's fields per task and per group (`shared`: add `n_shared`, the items judged against)."""
    bootstrap = results.config.bootstrap

    def fields(pooled: list[dict[str, Any]]) -> dict[str, Any]:
        found = judge_fields(pooled, bootstrap)
        return {**found, "n_shared": len(pooled)} if shared else found

    tasks = {task: fields(task_lines) for task, task_lines in lines.items()}
    groups: dict[str, dict[str, Any]] = {}
    by_leaves: dict[tuple[str, ...], dict[str, Any]] = {}
    for name in results.groups:
        leaves = tuple(leaf for leaf in leaf_tasks(name, results) if leaf in lines)
        if not leaves:
            continue
        if leaves not in by_leaves:  # the same pooled lines give the same fields (seeded bootstrap)
            by_leaves[leaves] = (
                tasks[leaves[0]] if len(leaves) == 1 else fields([x for leaf in leaves for x in lines[leaf]])
            )
        groups[name] = by_leaves[leaves]
    return tasks, groups


@dataclass
class _Set:
    """One set of judgments with its meta (judge.json) and its fields per task and group."""

    judgments: JudgmentSet
    meta: dict[str, Any]
    lines: dict[str, list[dict[str, Any]]]
    tasks: dict[str, dict[str, Any]]
    groups: dict[str, dict[str, Any]]

    def rank(self) -> tuple[bool, float, str]:
        """Which set to show first: one that judged anything (a pass that failed whole never hides a
        good result), then the last one run."""
        judged = any(fields.get("judged") for fields in self.tasks.values())
        unix = self.meta.get("judged_unix")
        return (
            judged,
            float(unix) if isinstance(unix, int | float) else 0.0,
            str(self.meta.get("judged_at") or ""),
        )


def _shown_per_opponent(sets: Sequence[_Set]) -> list[_Set]:
    """Per opponent, the set shown (see `_Set.rank`): an opponent judged by two judges shows one."""
    shown: dict[str | None, _Set] = {}
    for found in sets:
        kept = shown.get(found.judgments.opponent)
        if kept is None or found.rank() >= kept.rank():
            shown[found.judgments.opponent] = found
    return list(shown.values())


def _named(sets: Sequence[_Set], name_of: Any, identity_of: Any) -> dict[str, _Set]:
    """Sets by readable name; a digest of the identity is added where two would share a name."""
    names = [name_of(found.meta) for found in sets]
    named = {}
    for found, name in zip(sets, names, strict=True):
        if names.count(name) > 1:
            name = f"{name} #{str(identity_of(found.meta) or found.judgments.folder.name)[:8]}"
        named[name] = found
    return named


def _judge_name(meta: Mapping[str, Any]) -> str:
    return str(meta.get("spec") or "judge")


def _opponent_name(meta: Mapping[str, Any]) -> str:
    against = meta.get("against") or {}
    return str(against.get("name") or against.get("model") or "another run")


def _opponent_identity(meta: Mapping[str, Any]) -> Any:
    return (meta.get("against") or {}).get("identity")


def _put(
    target: TaskResult | GroupResult, key: str, name: str | None, fields: dict[str, Any]
) -> dict[str, Any]:
    data = target.model_dump()
    if name is None:
        return {**data, **fields}
    return {**data, key: {**(data.get(key) or {}), name: fields}}


def judged_results(
    results: RunResults, sets: Sequence[JudgmentSet], records: Mapping[str, Sequence[SampleRecord]]
) -> RunResults:
    """`results` with the fields of every set of judgments (see the module docstring)."""
    found = []
    for judgments in sets:
        lines = set_lines(judgments, results, records)
        shared = judgments.opponent is not None
        found.append(_Set(judgments, judgments.meta() or {}, lines, *set_fields(lines, results, shared)))
    baseline = _named([f for f in found if f.judgments.opponent is None], _judge_name, lambda m: m.get("key"))
    opponents = _shown_per_opponent([f for f in found if f.judgments.opponent is not None])
    versus = _named(opponents, _opponent_name, _opponent_identity)
    top = max(baseline, key=lambda name: baseline[name].rank(), default=None)
    config = results.config
    for kind, named in ((JUDGES, baseline), (VERSUS, versus)):
        for name, shown in named.items():
            places = [name] + ([None] if kind == JUDGES and name == top else [])
            for place in places:
                for task, fields in shown.tasks.items():
                    results.results[task] = TaskResult(**_put(results.results[task], kind, place, fields))
                for group, fields in shown.groups.items():
                    results.groups[group] = GroupResult(**_put(results.groups[group], kind, place, fields))
            setattr(config, kind, {**(getattr(config, kind) or {}), name: shown.meta})
    if top is not None:
        config.judge = baseline[top].meta
    _agreements(results, baseline)
    return results


def _agreement_entry(
    judges: tuple[tuple[str, _Set], tuple[str, _Set]], leaves: Sequence[str], place: str, group: bool
) -> dict[str, Any]:
    """Two judges' agreement on the tasks `leaves` (pooled), and each one's consistency at `place`."""
    (first, a), (second, b) = judges
    own_a, own_b = (a.groups, b.groups) if group else (a.tasks, b.tasks)
    consistency = {
        first: (own_a.get(place) or {}).get("position_consistency"),
        second: (own_b.get(place) or {}).get("position_consistency"),
    }
    pooled_a = [line for leaf in leaves for line in a.lines[leaf]]
    pooled_b = [line for leaf in leaves for line in b.lines[leaf]]
    return {**agreement(pooled_a, pooled_b), "position_consistency": consistency}


def _agreements(results: RunResults, judges: Mapping[str, _Set]) -> None:
    """Where two or more judges judged the run: each pair's agreement per task and, pooled, per group,
    with each judge's own position consistency beside it (`rolebench.judging.agreement`)."""
    names = sorted(judges)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            pair = ((first, judges[first]), (second, judges[second]))
            label = f"{first} vs {second}"
            both = {t for t in results.results if t in judges[first].lines and t in judges[second].lines}
            for task in results.results:
                if task in both:
                    found = _agreement_entry(pair, [task], task, group=False)
                    results.results[task] = TaskResult(**_put(results.results[task], AGREEMENT, label, found))
            for group in results.groups:
                leaves = [t for t in leaf_tasks(group, results) if t in both]
                if leaves:
                    found = _agreement_entry(pair, leaves, group, group=True)
                    results.groups[group] = GroupResult(
                        **_put(results.groups[group], AGREEMENT, label, found)
                    )
