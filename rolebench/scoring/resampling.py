"""Statistics over items that several runs share, every resample at once (numpy matrices, no loop over
resamples): the paired comparison of two runs (`rolebench compare`) and the rank intervals of a board's rows
(the leaderboard).

How a split is resampled. Each task's items are drawn with replacement, n of n per resample; the same draw
serves every run and every metric of that task (the resampling is paired across runs and joint across
metrics), and each task of a group is drawn on its own (a stratified bootstrap: the group keeps its tasks'
sizes). A resample is a matrix of counts (how often each item was drawn), so a task's resampled means are
one matrix product: sums = counts @ values, n = counts @ present. From them, per resample, exactly as
`rolebench.scoring.aggregate` computes the reported numbers: a task's metric is the mean of its items
that have a value; a group's metric is the mean of its tasks' (a pooled column, the judge's win rate, pools
the items of every task instead, as the judge does); a group's `avg` is the mean of its available CUS, RAW
and SPE. So a group's avg gets an interval although no single item has an avg: per-item means do not exist
across tasks, the resample of every task does.

The paired permutation test: if A and B were the same model, swapping A's and B's answers to an item would
change nothing. Each permutation swaps each item with probability 1/2, every column of the item together
(it flips the sign of the item's differences), and computes the same task, group and avg differences;
p = (1 + permutations at least as far from 0 as the observed difference) / (1 + permutations), two-sided.

Intervals are percentile intervals read as `rolebench.scoring.stats.percentile_interval` reads them. Every
draw is seeded by the settings' seed and the task's name, so the numbers do not depend on which other tasks
are compared.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from rolebench.scoring.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, percentile_interval

Array = npt.NDArray[np.float64]
BLOCK_CELLS = 2_000_000  # resample-by-item cells drawn at once: about 16 MB, whatever the split's size
_TOLERANCE = 1e-12  # a permuted difference this close to the observed one counts as "as far from 0"


@dataclass(frozen=True)
class Resampling:
    """How many resamples, the interval's confidence and the seed (results.json's `config.bootstrap`)."""

    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0


@dataclass(frozen=True)
class TaskItems:
    """One task's items as S series (runs, or the difference of two runs) by C columns (protocol and
    metric): `values[s, i, c]`, NaN where series s has no value of column c for item i."""

    values: Array  # (S, n, C)
    columns: tuple[str, ...]

    @property
    def n(self) -> int:
        return int(self.values.shape[1])


@dataclass(frozen=True)
class Layout:
    """How tasks make groups: each group's member tasks; the columns a group pools over its tasks' items
    (else it takes the mean of its tasks' means); the columns that are the mean of other columns of a group
    (`avg`), recomputed per resample."""

    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    pooled: frozenset[str] = frozenset()
    derived: Mapping[str, Sequence[str]] = field(default_factory=dict)


Sums = dict[str, tuple[Array, Array]]  # column -> (sums, counts), each (R, S)


def task_seed(settings: Resampling, task: str, purpose: int) -> np.random.Generator:
    """The generator of one task's draws (purpose 0: bootstrap, 1: permutation)."""
    return np.random.default_rng([settings.seed, zlib.crc32(task.encode("utf-8")), purpose])


def _blocks(n: int, resamples: int) -> list[int]:
    size = max(1, BLOCK_CELLS // max(n, 1))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def _sums(items: TaskItems, weights: Array, counts: Array) -> Sums:
    """Per column, the weighted sums of each series' values and the weighted number of values present."""
    present = ~np.isnan(items.values)
    n_series = items.values.shape[0]
    flat = np.where(present, items.values, 0.0).transpose(1, 0, 2).reshape(items.n, -1)
    sums = (weights @ flat).reshape(len(weights), n_series, -1)
    if present.all():  # every item has every value: the count is the number of items drawn
        drawn = counts.sum(axis=1)
        found = np.broadcast_to(drawn[:, None, None], (len(counts), *present.shape[::2]))
    else:
        flags = present.transpose(1, 0, 2).reshape(items.n, -1).astype(np.float64)
        found = (counts @ flags).reshape(len(counts), n_series, -1)
    return {
        c: (sums[:, :, j], np.broadcast_to(found[:, :, j], sums[:, :, j].shape))
        for j, c in enumerate(items.columns)
    }


def observed(items: TaskItems) -> Sums:
    """The sums behind the reported means (every item once)."""
    ones = np.ones((1, items.n))
    return _sums(items, ones, ones)


def bootstrap(items: TaskItems, settings: Resampling, task: str) -> Sums:
    """The sums of every bootstrap resample of the task's items (the same draws for every series)."""
    rng = task_seed(settings, task, 0)
    parts = []
    for size in _blocks(items.n, settings.resamples):
        small = np.uint16 if items.n <= 1 << 16 else np.int64  # 16-bit draws are the fastest to make
        draws = rng.integers(0, items.n, size=(size, items.n), dtype=small).astype(np.int64)
        draws += (np.arange(size, dtype=np.int64) * items.n)[:, None]
        drawn = np.bincount(draws.ravel(), minlength=size * items.n).reshape(size, items.n)
        weights = drawn.astype(np.float64)
        parts.append(_sums(items, weights, weights))
    return _stack(parts)


def sign_flips(items: TaskItems, settings: Resampling, task: str) -> Sums:
    """The sums of every permutation: each item's values (differences) multiplied by +1 or -1."""
    rng = task_seed(settings, task, 1)
    ones = np.ones((1, items.n))
    parts = []
    for size in _blocks(items.n, settings.resamples):
        bits = rng.integers(0, 256, size=(size, (items.n + 7) // 8), dtype=np.uint8)
        signs = np.unpackbits(bits, axis=1, count=items.n).astype(np.float64)
        signs *= -2.0
        signs += 1.0  # each item's sign: +1, or -1 when flipped
        parts.append(_sums(items, signs, ones))
    return _stack(parts)


def _stack(parts: Sequence[Sums]) -> Sums:
    if len(parts) == 1:
        return parts[0]
    return {
        c: (np.concatenate([p[c][0] for p in parts]), np.concatenate([p[c][1] for p in parts]))
        for c in parts[0]
    }


def _ratio(sums: Array, counts: Array) -> Array:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)


def _mean_available(values: Sequence[Array]) -> Array:
    """Elementwise mean of the arrays' non-NaN values (NaN where none has one)."""
    stacked = np.stack(values)
    present = ~np.isnan(stacked)
    total = np.where(present, stacked, 0.0).sum(axis=0)
    return _ratio(total, present.sum(axis=0).astype(np.float64))


def means(tasks: Mapping[str, Sums], layout: Layout) -> dict[str, dict[str, Array]]:
    """Every task's and group's columns, each (R, S): tasks' means, groups' means of their tasks' means (or
    pooled), then the derived columns (avg) of each group. An entry lacks a column none of its tasks has."""
    found: dict[str, dict[str, Array]] = {
        task: {c: _ratio(s, n) for c, (s, n) in sums.items()} for task, sums in tasks.items()
    }
    for group, members in layout.groups.items():
        present = [m for m in members if m in tasks]
        columns = dict.fromkeys(c for m in present for c in tasks[m])
        values: dict[str, Array] = {}
        for column in columns:
            holders = [m for m in present if column in tasks[m]]
            if column in layout.pooled:
                total = sum(tasks[m][column][0] for m in holders)
                count = sum(tasks[m][column][1] for m in holders)
                values[column] = _ratio(np.asarray(total), np.asarray(count))
            else:
                values[column] = _mean_available([found[m][column] for m in holders])
        for column, parts in layout.derived.items():
            held = [values[p] for p in parts if p in values]
            if held:
                values[column] = _mean_available(held)
        found[group] = values
    return found


def counts(tasks: Mapping[str, Sums], layout: Layout) -> dict[str, dict[str, int]]:
    """The number of items with a value behind each task's and group's column (of the first series)."""
    found = {task: {c: int(n[0, 0]) for c, (_, n) in sums.items()} for task, sums in tasks.items()}
    for group, members in layout.groups.items():
        present = [m for m in members if m in tasks]
        columns = dict.fromkeys(c for m in present for c in tasks[m])
        values = {c: sum(found[m].get(c, 0) for m in present) for c in columns}
        for column, parts in layout.derived.items():  # items: per task, the most of any of its parts
            if any(p in values for p in parts):
                values[column] = sum(
                    max((found[m][p] for p in parts if p in found[m]), default=0) for m in present
                )
        found[group] = values
    return found


def interval(resampled: Array, confidence: float) -> tuple[float, float] | None:
    """The percentile interval of one statistic's resamples (NaN resamples left out); None if none."""
    kept = resampled[~np.isnan(resampled)]
    if kept.size == 0:
        return None
    low, high = percentile_interval(kept.tolist(), confidence)
    return (float(low), float(high))


def permutation_p(observed_value: float, permuted: Array) -> float | None:
    """Two-sided p-value of a paired permutation test: (1 + at least as extreme) / (1 + permutations)."""
    kept = permuted[~np.isnan(permuted)]
    if kept.size == 0 or np.isnan(observed_value):
        return None
    extreme = int(np.count_nonzero(np.abs(kept) >= abs(observed_value) - _TOLERANCE))
    return (1 + extreme) / (1 + kept.size)


def competition_ranks(values: Array) -> Array:
    """Competition ranks (1, 2, 2, 4) along the last axis, highest value first: 1 + how many are higher."""
    higher = values[..., None, :] > values[..., :, None]
    ranks: Array = 1.0 + higher.sum(axis=-1).astype(np.float64)
    return ranks


@dataclass(frozen=True)
class Difference:
    """A against B on the items both have a value for: their means, A - B, its bootstrap interval, the
    permutation p-value and the number of items (None where the resamples give nothing)."""

    a: float | None
    b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p: float | None
    n: int


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def paired_differences(
    tasks: Mapping[str, tuple[Array, Array, tuple[str, ...]]], layout: Layout, settings: Resampling
) -> dict[str, dict[str, Difference]]:
    """Per task and group (`layout`) and column: A's and B's means on the items both have a value for, the
    difference, its paired bootstrap interval and paired permutation p-value. `tasks` gives each task's
    (a, b, columns): A's and B's values per item (rows, the same items in the same order) and column."""
    seen: dict[str, Sums] = {}
    resampled: dict[str, Sums] = {}
    flipped: dict[str, Sums] = {}
    for task, (a, b, columns) in tasks.items():
        both = ~np.isnan(a) & ~np.isnan(b)
        a, b = np.where(both, a, np.nan), np.where(both, b, np.nan)
        seen[task] = observed(TaskItems(np.stack([a, b, a - b]), columns))
        if settings.resamples > 0:
            differences = TaskItems((a - b)[None], columns)
            resampled[task] = bootstrap(differences, settings, task)
            flipped[task] = sign_flips(differences, settings, task)
    point = means(seen, layout)
    spread = means(resampled, layout) if resampled else {}
    permuted = means(flipped, layout) if flipped else {}
    numbers = counts(seen, layout)
    found: dict[str, dict[str, Difference]] = {}
    for entry, columns_of in point.items():
        found[entry] = {}
        for column, values in columns_of.items():
            diff = float(values[0, 2])
            found[entry][column] = Difference(
                a=_number(values[0, 0]),
                b=_number(values[0, 1]),
                diff=_number(diff),
                ci=interval(spread[entry][column][:, 0], settings.confidence) if spread else None,
                p=permutation_p(diff, permuted[entry][column][:, 0]) if permuted else None,
                n=numbers[entry][column],
            )
    return found


@dataclass(frozen=True)
class RankIntervals:
    """Several runs (series) on the same items, by one column of one group: each run's value, its interval,
    its rank and its rank interval [best, worst] (competition ranks, highest value first)."""

    values: list[float]
    intervals: list[tuple[float, float] | None]
    ranks: list[int]
    rank_intervals: list[tuple[int, int] | None]


def rank_intervals(
    tasks: Mapping[str, TaskItems], layout: Layout, group: str, columns: Sequence[str], settings: Resampling
) -> dict[str, RankIntervals]:
    """Per column of `group`: every series' value, its interval and its rank interval, the tasks' items drawn
    jointly for all series (each resample ranks every series on the same items)."""
    point = means({t: observed(items) for t, items in tasks.items()}, layout)[group]
    spread = (
        means({t: bootstrap(items, settings, t) for t, items in tasks.items()}, layout)[group]
        if settings.resamples > 0
        else {}
    )
    found = {}
    for column in columns:
        values = point[column][0]
        series = range(len(values))
        if column not in spread:
            found[column] = RankIntervals(
                values.tolist(),
                [None for _ in series],
                [int(r) for r in competition_ranks(values)],
                [None for _ in series],
            )
            continue
        ranks = competition_ranks(spread[column])
        bounds = [interval(ranks[:, s], settings.confidence) for s in series]
        found[column] = RankIntervals(
            values=values.tolist(),
            intervals=[interval(spread[column][:, s], settings.confidence) for s in series],
            ranks=[int(r) for r in competition_ranks(values)],
            rank_intervals=[None if b is None else (int(b[0]), int(b[1])) for b in bounds],
        )
    return found
