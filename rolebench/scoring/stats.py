"""Aggregates over per-sample scores: means and seeded percentile-bootstrap confidence intervals."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from rolebench.results.scoring_settings import DEFAULT_CONFIDENCE as DEFAULT_CONFIDENCE
from rolebench.results.scoring_settings import DEFAULT_RESAMPLES as DEFAULT_RESAMPLES

_BLOCK_DRAWS = 1 << 21  # items drawn per block of resamples (bounds the bootstrap's memory)


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
    data = np.asarray(values, dtype=np.float64)
    draws = _python_uniforms(seed)
    means: list[float] = []
    per_block = max(1, _BLOCK_DRAWS // n)  # resamples drawn at once (memory bounded, whatever n)
    for start in range(0, resamples, per_block):
        rows = min(per_block, resamples - start)
        picks = (draws.random_sample((rows, n)) * float(n)).astype(np.intp)
        means.extend((np.cumsum(data[picks], axis=1)[:, -1] / n).tolist())
    return percentile_interval(means, confidence)


def _python_uniforms(seed: int) -> np.random.RandomState:
    """numpy's Mersenne Twister in the state of `random.Random(seed)`: its uniforms are the very floats
    `random.Random(seed).random()` returns, in the same order (both make a double of two 32-bit words
    the same way), so `floor(u * n)` picks what `Random.choices(data, k=n)` picks. With a sequential
    sum (cumsum) each resample's mean is the float the one-at-a-time loop computes: the intervals are
    those of every earlier version, found 3x to 9x faster (benchmarks/bench_bootstrap.py)."""
    state = random.Random(seed).getstate()[1]
    draws = np.random.RandomState()
    draws.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), int(state[624]), 0, 0.0))
    return draws


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
