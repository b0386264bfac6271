"""Aggregates over per-sample scores: means and seeded percentile-bootstrap confidence intervals."""

from __future__ import annotations

import random
from collections.abc import Sequence

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean; None for no values (a metric that could not be computed)."""
    return sum(values) / len(values) if values else None


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, deterministic for a given seed; None if < 2 values."""
    n = len(values)
    if n < 2 or resamples < 1:
        return None
    rng = random.Random(seed)
    data = list(values)
    return percentile_interval([sum(rng.choices(data, k=n)) / n for _ in range(resamples)], confidence)


def percentile_interval(
    resampled: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float]:
    """The percentile interval of resampled values (at least one): the values at the tails' positions
    of the sorted list, the one rule every interval of the package is read with."""
    ordered = sorted(resampled)
    tail = (1.0 - confidence) / 2.0
    last = len(ordered) - 1
    return (ordered[int(tail * last)], ordered[int(round((1.0 - tail) * last))])


def mean_of_available(values: Sequence[float | None]) -> float | None:
    """Mean of the values that are not None (e.g. `avg` over CUS, RAW, SPE)."""
    present = [v for v in values if v is not None]
    return mean(present)
