"""Statistics over items that several runs share, every resample at once (numpy matrices, no loop over
resamples): the bootstrap behind the paired comparison of two runs (`rolebench compare`,
`rolebench.scoring.permutation`) and the rank intervals of a board's rows (`rolebench.scoring.ranks`).

How a split is resampled. Each task's items are drawn with replacement, n of n per resample; the same draw
serves every run and every metric of that task (the resampling is paired across runs and joint across
metrics), and each task of a group is drawn on its own (a stratified bootstrap: the group keeps its tasks'
sizes). Within a task, a statistic resamples the items that have its values, as many as there are: the
columns that have values on the same items, or that make one derived column (a group's avg), are drawn
together from the items where any of them has a value (`draw_sets`), and an item with no value is never
drawn (a run that shares 7 of a task's 239 items is compared on a bootstrap of those 7; a win rate judged on
10 items, on those 10). A resample is a matrix of counts (how often each item was drawn), so a task's
resampled means are one matrix product: sums = counts @ values, n = counts @ present. From them, per
resample, exactly as `rolebench.scoring.aggregate` computes the reported numbers: a task's metric is the
mean of its items that have a value; a group's metric is the mean of its tasks' (a pooled column, the
judge's win rate, pools the items of every task instead, as the judge does); a group's `avg` is the mean of
its available CUS, RAW and SPE. So a group's avg gets an interval although no single item has an avg: per-
item means do not exist across tasks, the resample of every task does.

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
IntArray = npt.NDArray[np.int64]
BLOCK_CELLS = 2_000_000  # resample-by-item cells drawn at once: about 16 MB, whatever the split's size


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


def blocks(n: int, resamples: int) -> list[int]:
    size = max(1, BLOCK_CELLS // max(n, 1))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def weighted_sums(items: TaskItems, weights: Array, counts: Array) -> Sums:
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
    return weighted_sums(items, ones, ones)


def draw_sets(
    items: TaskItems, linked: Mapping[str, Sequence[str]]
) -> list[tuple[tuple[str, ...], IntArray]]:
    """The task's columns drawn together, each set with the items it draws from: columns that make one
    derived column (`linked`, a group's avg) or that have values on the same items share a set; a set draws
    from the items where any of its columns has a value. Every column in one set of every item when every
    item has every value."""
    present = np.asarray((~np.isnan(items.values)).any(axis=0))  # (n, C): some series has the value
    width = len(items.columns)
    if present.all():
        return [(items.columns, np.arange(items.n, dtype=np.int64))]
    owner = list(range(width))

    def root(j: int) -> int:
        while owner[j] != j:
            j = owner[j]
        return j

    def link(js: Sequence[int]) -> None:
        for j in js[1:]:
            owner[root(j)] = root(js[0])

    for parts in linked.values():
        link([j for j, c in enumerate(items.columns) if c in parts])
    masks: dict[bytes, list[int]] = {}
    for j in range(width):
        masks.setdefault(present[:, j].tobytes(), []).append(j)
    for same in masks.values():
        link(same)
    sets: dict[int, list[int]] = {}
    for j in range(width):
        sets.setdefault(root(j), []).append(j)
    found = []
    for js in sets.values():
        rows = np.flatnonzero(present[:, js].any(axis=1))
        if rows.size:
            found.append((tuple(items.columns[j] for j in js), rows))
    return found


def bootstrap(
    items: TaskItems, settings: Resampling, task: str, linked: Mapping[str, Sequence[str]] | None = None
) -> Sums:
    """The sums of every bootstrap resample of the task's items: the same draws for every series; each set
    of `draw_sets` (`linked`: the layout's derived columns) drawn from its own items, as many as it has."""
    rng = task_seed(settings, task, 0)
    sets = [(restricted(items, columns), rows) for columns, rows in draw_sets(items, linked or {})]
    parts = []
    for size in blocks(items.n, settings.resamples):
        block: Sums = {}
        for held, rows in sets:
            m = len(rows)
            small = np.uint16 if m <= 1 << 16 else np.int64  # 16-bit draws are the fastest to make
            draws = rng.integers(0, m, size=(size, m), dtype=small).astype(np.int64)
            draws += (np.arange(size, dtype=np.int64) * m)[:, None]
            drawn = np.bincount(draws.ravel(), minlength=size * m).reshape(size, m)
            weights = drawn.astype(np.float64)
            if m < items.n:
                weights = np.zeros((size, items.n))
                weights[:, rows] = drawn
            block.update(weighted_sums(held, weights, weights))
        nothing = np.zeros((size, items.values.shape[0]))  # a column no item has a value of
        parts.append({c: block.get(c, (nothing, nothing)) for c in items.columns})
    return stack(parts)


def restricted(items: TaskItems, columns: Sequence[str]) -> TaskItems:
    if tuple(columns) == items.columns:
        return items
    keep = [j for j, c in enumerate(items.columns) if c in columns]
    return TaskItems(items.values[:, :, keep], tuple(items.columns[j] for j in keep))


def stack(parts: Sequence[Sums]) -> Sums:
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
