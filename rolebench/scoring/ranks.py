"""Rank intervals: several runs on the same items ranked in every bootstrap resample of
`rolebench.scoring.resampling` (each resample ranks every run on the same items), each run's rank
interval [best, worst] the percentile interval of its competition ranks (highest value first); the
leaderboard's (`rolebench.leaderboard.ranking`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rolebench.scoring.resampling import (
    Array,
    Layout,
    Resampling,
    TaskItems,
    bootstrap,
    interval,
    means,
    observed,
)


def competition_ranks(values: Array) -> Array:
    """Competition ranks (1, 2, 2, 4) along the last axis, highest value first: 1 + how many are higher."""
    higher = values[..., None, :] > values[..., :, None]
    ranks: Array = 1.0 + higher.sum(axis=-1).astype(np.float64)
    return ranks


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
        means({t: bootstrap(items, settings, t, layout.derived) for t, items in tasks.items()}, layout)[group]
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
