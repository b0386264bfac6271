"""How sure a board's order is: each ranked row's rank interval [best, worst], its avg's interval, and which
rows are statistically tied (their rank intervals overlap).

A board's ranked rows are complete runs of the same split, data and protocol: they answered the same
items. The items of each task of the split are drawn with replacement, jointly for every row (one draw ranks
all rows on the same items), each row's avg is recomputed per resample as results.json computes it (the mean
of its tasks' CUS, RAW and SPE; `rolebench.scoring.resampling`), and the rows are ranked in each resample
(competition ranks, highest avg first). A row's rank interval is the percentile interval of its ranks; the
same for the F-measure's avg (`rank_f_interval`). The per-item scores come from each run's samples files
(`rolebench.leaderboard.items`); a row whose items are not found, or do not give back its avg, leaves its
board without rank intervals, and the board says why. A board with one ranked row ranks it [1, 1] without
resampling (and draws its avg without an interval: there is no other row to tell it from).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rolebench.data.splits import get_split
from rolebench.leaderboard.items import RunScores, TaskScores
from rolebench.leaderboard.rows import Board, Row
from rolebench.leaderboard.runs import present_splits
from rolebench.scoring.metrics import AVG, METRIC_KEYS, metrics_for
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL
from rolebench.scoring.ranks import rank_intervals
from rolebench.scoring.resampling import Layout, Resampling, TaskItems

RANKING = Resampling()  # the resamples, confidence and seed of every board's intervals (leaderboard.json)
_TOLERANCE = 1e-5  # a row's avg from its rounded per-item scores against the avg its results.json reports


def _row_items(row: Row, scores: Mapping[str, RunScores]) -> dict[str, TaskScores] | None:
    """The row's per-item scores by split id, or None when a split's are missing."""
    by_split = {s.split: s for s in scores.get(row.run, {}).values()}
    found = {split: by_split[split] for split in present_splits(row) if split in by_split}
    return found if len(found) == len(present_splits(row)) else None


def _columns(board: Board) -> list[str]:
    return list(dict.fromkeys([board.protocol, F_MEASURE_PROTOCOL]))


def _task_items(
    split: str, items: Sequence[TaskScores], protocols: Sequence[str]
) -> tuple[TaskItems, list[str]] | None:
    """The rows' values on the items all of them hold (by id, in the first row's order)."""
    first = items[0].ids
    if all(i.ids == first for i in items):  # the same items in the same order: the usual case
        order = first
    else:
        held = set.intersection(*(set(i.ids) for i in items))
        order = [i for i in first if i in held]
    if not order:
        return None
    metrics = [m.key for m in metrics_for(get_split(split).kind)]
    columns = [  # a metric no row has a value for (RAW without raw answers) draws nothing
        (p, m)
        for p in protocols
        for m in metrics
        if any(
            (i.scores.get(p) or {}).get(m) is not None and not np.isnan(i.scores[p][m]).all() for i in items
        )
    ]
    values = np.full((len(items), len(order), len(columns)), np.nan)
    for s, task in enumerate(items):
        if task.ids == order:
            rows: list[int] | slice = slice(None)
        else:
            position = {item: index for index, item in enumerate(task.ids)}
            rows = [position[i] for i in order]
        for c, (protocol, metric) in enumerate(columns):
            column = (task.scores.get(protocol) or {}).get(metric)
            if column is not None:
                values[s, :, c] = column[rows]
    return TaskItems(values, tuple(f"{p}:{m}" for p, m in columns)), order


def add_rank_intervals(board: Board, scores: Mapping[str, RunScores], settings: Resampling = RANKING) -> None:
    """Set each ranked row's rank intervals, avg intervals and ties (see the module docstring)."""
    ranked = [r for r in board.rows if r.rank is not None]
    if not ranked or board.reference:
        return
    if len(ranked) == 1:  # first in every resample: nothing to resample
        ranked[0].rank_interval = [1, 1]
        ranked[0].rank_f_interval = [1, 1] if ranked[0].rank_f is not None else None
        return
    items = {id(r): _row_items(r, scores) for r in ranked}
    missing = [r for r in ranked if items[id(r)] is None]
    if missing:
        board.rank_note = f"no rank intervals: no per-item scores of {missing[0].run} (its samples files)"
        return
    protocols = _columns(board)
    tasks: dict[str, TaskItems] = {}
    for split in present_splits(ranked[0]):
        built = _task_items(split, [items[id(r)][split] for r in ranked], protocols)  # type: ignore[index]
        if built is None:
            board.rank_note = f"no rank intervals: the ranked rows share no item of {split}"
            return
        tasks[split] = built[0]
    derived = {f"{p}:{AVG}": [f"{p}:{m}" for m in METRIC_KEYS] for p in protocols}
    layout = Layout({board.split: list(tasks)}, frozenset(), derived)
    found = rank_intervals(tasks, layout, board.split, list(derived), settings)
    headline, f_measure = found[f"{board.protocol}:{AVG}"], found[f"{F_MEASURE_PROTOCOL}:{AVG}"]
    for s, row in enumerate(ranked):
        if abs(headline.values[s] - (row.avg or 0.0)) > _TOLERANCE:
            board.rank_note = f"no rank intervals: the samples of {row.run} do not give back its avg"
            return
    for s, row in enumerate(ranked):
        row.rank_interval = _ranks(headline.rank_intervals[s])
        row.avg_ci = _bounds(headline.intervals[s])
        if row.rank_f is not None:
            row.rank_f_interval = _ranks(f_measure.rank_intervals[s])
            row.f_avg_ci = _bounds(f_measure.intervals[s])
    mark_ties(ranked)


def _ranks(bounds: tuple[int, int] | None) -> list[int] | None:
    return None if bounds is None else [bounds[0], bounds[1]]


def _bounds(bounds: tuple[float, float] | None) -> list[float] | None:
    return None if bounds is None else [bounds[0], bounds[1]]


def mark_ties(rows: Sequence[Row]) -> None:
    """Rows whose rank intervals overlap are statistically tied: each names the others."""
    for row in rows:
        row.tied_with = [
            other.model
            for other in rows
            if other is not row
            and row.rank_interval
            and other.rank_interval
            and max(row.rank_interval[0], other.rank_interval[0])
            <= min(row.rank_interval[1], other.rank_interval[1])
        ]
