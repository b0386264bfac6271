"""Is A really above B? Two runs compared on the items both hold (`rolebench compare`).

Reading the two runs is this module's job; the statistics are `rolebench.scoring.permutation`'s
(`paired_differences`). Items are joined by sample id, with the same role and question; per task and group
(the groups both runs have, over tasks both hold) and per metric (`cus`, `raw`, `spe`, and a group's `avg`),
under the runs' headline protocol and the F-measure (protocol `rolebench`), a metric counts the items where
both runs have a value. When one judge (spec, prompt, protocol) judged both runs against the RoleGPT
baseline, `win_rate` is compared on the items both had judged (pooled over a group's tasks, as the judge
pools them): the runs' last judge when it is the same, else a judge both hold, and the document says so
(`judge_note`); when none judged both, the note says why there is no win rate. Runs of different data (a
task's split, version or files), of different headline protocols, or without an item in common are refused
in one line naming the difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rolebench.data.splits import get_split
from rolebench.errors import DataError
from rolebench.leaderboard.comparable import family_of, judge_key, protocol_key, split_fingerprints
from rolebench.report.compare import measure_label
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.run.folder import RunFolder
from rolebench.scoring.metrics import AVG, METRIC_KEYS, metrics_for
from rolebench.scoring.permutation import Difference, paired_differences
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL
from rolebench.scoring.resampling import Layout, Resampling

WIN_RATE = "win_rate"
_JUDGE = "judge"  # the column prefix of the judge's outcomes


@dataclass
class Run:
    """A run folder as a comparison reads it: results, samples per task, and each judge's (by `judge_key`)
    outcomes per task and id, of every judge that judged it against the RoleGPT baseline."""

    path: Path
    results: RunResults
    samples: dict[str, list[SampleRecord]]
    judged: dict[str, dict[str, dict[str, float]]]

    @property
    def spec(self) -> str:
        return str(self.results.config.model.get("spec") or "unknown model")

    @property
    def headline(self) -> str:
        return str(self.results.config.scoring.get("protocol") or "unknown")

    def holds(self, protocol: str) -> bool:
        return protocol == self.headline or protocol in (self.results.config.scoring.get("protocols") or {})


def load_run(path: Path, results: RunResults, tasks: list[str]) -> Run:
    """A run folder's samples of `tasks` and its judge outcomes; a samples file that is not the one its
    results.json was computed from (an interrupted write) is refused in one line."""
    folder = RunFolder(path)
    stale = [t for t in folder.stale_tasks(results) if t in tasks]
    if stale:
        raise DataError(
            f"results.json does not match the samples of {', '.join(stale)} (an interrupted write)",
            where=str(path),
            fix=f"compute it again from the samples first: `rolebench score {path}`",
        )
    judged = {
        judge_key(meta): _judge_outcomes(folder, meta, tasks) for meta in baseline_judges(results).values()
    }
    return Run(Path(path), results, {t: folder.read_samples(t) for t in tasks}, judged)


def baseline_judges(results: RunResults) -> dict[str, dict[str, Any]]:
    """The judges of a run against the RoleGPT baseline by name, the last one run (`config.judge`) first."""
    config = results.config
    found = {str(n): m for n, m in (config.judges or {}).items() if isinstance(m, dict) and m.get("spec")}
    last = config.judge
    if not last:
        return found
    first = next((n for n, m in found.items() if judge_key(m) == judge_key(last)), str(last.get("spec")))
    return {first: last, **{n: m for n, m in found.items() if n != first}}


def _judge_outcomes(
    folder: RunFolder, judge: dict[str, Any], tasks: list[str]
) -> dict[str, dict[str, float]]:
    """Per task and sample id, the outcome (win 1, tie .5, loss 0) of one judge (its judge.json block, as
    results.json's `config.judges` shows it), where it judged one."""
    from rolebench.judging.outcomes import OUTCOME_SCORE
    from rolebench.judging.sets import set_of

    judgments = set_of(folder, judge)
    judged: dict[str, dict[str, float]] = {}
    for task in tasks:
        lines = judgments.lines(task)
        if lines:
            judged[task] = {
                str(line.get("id")): OUTCOME_SCORE[str(line["outcome"])]
                for line in lines
                if line.get("status") == "judged" and line.get("outcome") in OUTCOME_SCORE
            }
    return judged


def shared_tasks(a: RunResults, b: RunResults, where: str) -> list[str]:
    """The tasks both runs hold, after checking they read the same data for each (split, version, files)."""
    tasks = [t for t in a.results if t in b.results]
    if not tasks:
        raise DataError(
            f"the runs have no task in common (A: {', '.join(a.results)}; B: {', '.join(b.results)})",
            where=where,
            fix="compare two runs of the same tasks",
        )
    configs = (a.config.model_dump(), b.config.model_dump())
    for task in tasks:
        splits = (a.results[task].split, b.results[task].split)
        versions = tuple((c.get("tasks") or {}).get(task, {}).get("version") for c in configs)
        prints = tuple(
            split_fingerprints(c, family_of(s), [s])[s] for c, s in zip(configs, splits, strict=True)
        )
        for what, pair in (("split", splits), ("task version", versions), ("data files", prints)):
            if pair[0] != pair[1]:
                raise DataError(
                    f"the runs read different data for {task}: {what} {pair[0]} in A, {pair[1]} in B",
                    where=where,
                    fix="compare runs of the same data (same files, revision and task version)",
                )
    return tasks


def compared_protocols(a: Run, b: Run, where: str) -> list[str]:
    """The headline protocol (the same in both runs) and the F-measure, where both hold it."""
    if a.headline != b.headline:
        raise DataError(
            f"the runs have different headline protocols ({a.headline} in A, {b.headline} in B)",
            where=where,
            fix="compare runs scored under the same protocol (`rolebench evaluate --protocol`)",
        )
    chosen = [p for p in dict.fromkeys([a.headline, F_MEASURE_PROTOCOL]) if a.holds(p) and b.holds(p)]
    for protocol in chosen:
        keys = [protocol_key(r.results.config.scoring, protocol) for r in (a, b)]
        if keys[0] != keys[1]:
            raise DataError(
                f"the runs define protocol {protocol} differently (references or tokenizers)",
                where=where,
                fix="score both with the same rolebench version (`rolebench score DIR`)",
            )
    return chosen


def _column(protocol: str, metric: str) -> str:
    return f"{protocol}:{metric}"


def _join(a: list[SampleRecord], b: list[SampleRecord], task: str, where: str) -> list[tuple[int, int]]:
    """(index in A, index in B) of the items both hold, joined by id; the same id must be the same item."""
    in_b = {record.id: index for index, record in enumerate(b)}
    pairs = []
    for index, record in enumerate(a):
        other = in_b.get(record.id)
        if other is None:
            continue
        if (b[other].role, b[other].question) != (record.role, record.question):
            raise DataError(
                f"the runs hold different items under the id {record.id} of {task}",
                where=where,
                fix="compare runs of the same data",
            )
        pairs.append((index, other))
    return pairs


def _values(records: list[SampleRecord], rows: list[int], columns: list[tuple[str, str]]) -> np.ndarray:
    found = np.full((len(rows), len(columns)), np.nan)
    for i, row in enumerate(rows):
        record = records[row]
        for j, (protocol, metric) in enumerate(columns):
            value = record.protocol_scores.get(protocol, {}).get(metric)
            if value is not None:
                found[i, j] = value
    return found


def _task_arrays(
    a: Run, b: Run, task: str, protocols: list[str], judge: str | None, where: str
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None:
    pairs = _join(a.samples[task], b.samples[task], task, where)
    if not pairs:
        return None
    metrics = [m.key for m in metrics_for(get_split(a.results.results[task].split).kind)]
    columns = [(p, m) for p in protocols for m in metrics]
    values_a = _values(a.samples[task], [i for i, _ in pairs], columns)
    values_b = _values(b.samples[task], [j for _, j in pairs], columns)
    names = [_column(p, m) for p, m in columns]
    outcomes = (a.judged.get(judge or ""), b.judged.get(judge or ""))
    if outcomes[0] is not None and outcomes[1] is not None and task in outcomes[0] and task in outcomes[1]:
        ids = [a.samples[task][i].id for i, _ in pairs]
        win_a = np.array([outcomes[0][task].get(i, np.nan) for i in ids])
        win_b = np.array([outcomes[1][task].get(i, np.nan) for i in ids])
        values_a, values_b = np.column_stack([values_a, win_a]), np.column_stack([values_b, win_b])
        names.append(_column(_JUDGE, WIN_RATE))
    return values_a, values_b, tuple(names)


def common_judge(a: Run, b: Run) -> tuple[dict[str, Any] | None, str | None]:
    """The judge whose win rates are compared (its judge.json block) and a note on the choice: the runs'
    last judge when they share it (no note), else a judge (spec, prompt, protocol) that judged both against
    the RoleGPT baseline, A's latest first (the note says the last ones differ), else None and why not."""
    judges = {side: baseline_judges(run.results) for side, run in (("A", a), ("B", b))}
    if not judges["A"] and not judges["B"]:
        return None, None
    last = {side: next(iter(found.values()), None) for side, found in judges.items()}
    label = {side: str(m.get("spec")) if m else "none" for side, m in last.items()}
    if not judges["A"] or not judges["B"]:
        judged, other = ("A", "B") if judges["A"] else ("B", "A")
        return None, (
            f"no win rate: only {judged} was judged ({label[judged]}); to compare them, judge {other} "
            f"with the same judge (`rolebench judge RUN_{other} --judge {label[judged]}`)"
        )
    in_b = {judge_key(m) for m in judges["B"].values()}
    shared = [m for m in judges["A"].values() if judge_key(m) in in_b]
    if not shared:
        return None, (
            f"no win rate: no judge judged both runs (A: {', '.join(judges['A'])}; B: "
            f"{', '.join(judges['B'])}); judge one run with the other's judge (`rolebench judge RUN "
            "--judge SPEC`)"
        )
    chosen = shared[0]
    if last["A"] is not None and last["B"] is not None and judge_key(last["A"]) == judge_key(last["B"]):
        return chosen, None
    return chosen, (
        f"the runs' last judges differ ({label['A']} in A, {label['B']} in B): win rates compared on the "
        f"judge both hold, {chosen.get('spec')}"
    )


def _entry(found: Mapping[str, Difference], protocols: list[str]) -> dict[str, Any]:
    """A task's or group's differences in results.json's shape: the headline protocol's metrics at the
    top, every compared protocol in its own block, the win rate beside them."""

    def block(protocol: str) -> dict[str, Any]:
        return {
            m: asdict(found[_column(protocol, m)])
            for m in (*METRIC_KEYS, AVG)
            if _column(protocol, m) in found
        }

    entry: dict[str, Any] = {**block(protocols[0]), **{p: block(p) for p in protocols}}
    win = found.get(_column(_JUDGE, WIN_RATE))
    if win is not None:
        entry[WIN_RATE] = asdict(win)
    return entry


def compare_runs(a: Run, b: Run, settings: Resampling) -> dict[str, Any]:
    """The comparison document (what `rolebench compare --json` writes)."""
    where = f"{a.path} vs {b.path}"
    protocols = compared_protocols(a, b, where)
    judge, judge_note = common_judge(a, b)
    key = judge_key(judge) if judge else None
    tasks = {}
    for task in a.samples:
        arrays = _task_arrays(a, b, task, protocols, key, where)
        if arrays is not None:
            tasks[task] = arrays
    if not tasks:
        raise DataError(
            f"the runs share no item (tasks {', '.join(a.samples)})",
            where=where,
            fix="compare runs of the same items (the same --limit and seed, or full splits)",
        )
    groups = {
        name: list(group.tasks)
        for name, group in a.results.groups.items()
        if name in b.results.groups
        and list(group.tasks) == list(b.results.groups[name].tasks)
        and all(t in tasks for t in group.tasks)
    }
    derived = {_column(p, AVG): [_column(p, m) for m in METRIC_KEYS] for p in protocols}
    layout = Layout(groups, frozenset({_column(_JUDGE, WIN_RATE)}), derived)
    found = paired_differences(tasks, layout, settings)
    return {
        "a": {"run": str(a.path), "model": a.spec},
        "b": {"run": str(b.path), "model": b.spec},
        "protocol": protocols[0],
        "protocols": {p: measure_label(p) for p in protocols},
        "judge": judge.get("spec") if judge else None,
        "judge_note": judge_note,
        "bootstrap": asdict(settings),
        "tasks": {t: _entry(found[t], protocols) for t in tasks},
        "groups": {g: {"tasks": members, **_entry(found[g], protocols)} for g, members in groups.items()},
    }
