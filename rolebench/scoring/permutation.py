"""A against B on the items both hold (`rolebench compare`): the paired differences, their bootstrap
intervals (`rolebench.scoring.resampling`), the paired permutation test and the verdict read from both.

The paired permutation test: if A and B were the same model, swapping A's and B's answers to an item would
change nothing. Each permutation swaps each item with probability 1/2, every column of the item together
(it flips the sign of the item's differences), and computes the same task, group and avg differences. Where
a task or group has at most `EXACT_ITEMS` items with a value, every one of the 2^n sign flips is computed
and p = (sign flips at least as far from 0 as the observed difference) / 2^n, exactly (two items: 1/2 at
best); above, p = (1 + permutations at least as far from 0) / (1 + permutations), a Monte Carlo estimate,
two-sided.

A verdict ("A higher", "B higher") is given only when the interval excludes 0 on that side, p is at most
1 - confidence, and the items are enough for the test to reach that level at all (the smallest p of n items
is 2/2^n: at 95%, 6 items); otherwise the verdict says why not (`verdict`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from rolebench.scoring.resampling import (
    Array,
    Layout,
    Resampling,
    Sums,
    TaskItems,
    blocks,
    bootstrap,
    counts,
    interval,
    means,
    observed,
    restricted,
    stack,
    task_seed,
    weighted_sums,
)

EXACT_ITEMS = 16  # up to this many items with a value, the permutation test enumerates all 2^n sign flips
_TOLERANCE = 1e-12  # a permuted difference this close to the observed one counts as "as far from 0"


def sign_flips(items: TaskItems, settings: Resampling, task: str) -> Sums:
    """The sums of every permutation: each item's values (differences) multiplied by +1 or -1."""
    rng = task_seed(settings, task, 1)
    ones = np.ones((1, items.n))
    parts = []
    for size in blocks(items.n, settings.resamples):
        bits = rng.integers(0, 256, size=(size, (items.n + 7) // 8), dtype=np.uint8)
        signs = np.unpackbits(bits, axis=1, count=items.n).astype(np.float64)
        signs *= -2.0
        signs += 1.0  # each item's sign: +1, or -1 when flipped
        parts.append(weighted_sums(items, signs, ones))
    return stack(parts)


def valued(items: TaskItems) -> int:
    """How many of the task's items have any value (the ones a sign flip changes)."""
    return int((~np.isnan(items.values)).any(axis=(0, 2)).sum())


def all_sign_flips(tasks: Mapping[str, TaskItems]) -> dict[str, Sums]:
    """The sums of every one of the 2^n sign flips of the tasks' items that have a value (n of them in all,
    at most `EXACT_ITEMS`), jointly: row r flips item j of the list when bit j of r is set."""
    held = {t: np.flatnonzero((~np.isnan(i.values)).any(axis=(0, 2))) for t, i in tasks.items()}
    total = sum(len(rows) for rows in held.values())
    if total > EXACT_ITEMS:
        raise ValueError(f"{total} items: enumerating 2^{total} sign flips is not cheap")
    codes = np.arange(1 << total, dtype=np.int64)[:, None]
    found: dict[str, Sums] = {}
    start = 0
    for task, items in tasks.items():
        rows = held[task]
        bits = (codes >> np.arange(start, start + len(rows), dtype=np.int64)) & 1
        signs = np.ones((len(codes), items.n))
        signs[:, rows] = 1.0 - 2.0 * bits
        found[task] = weighted_sums(items, signs, np.ones((1, items.n)))
        start += len(rows)
    return found


def permutation_p(observed_value: float, permuted: Array, exact: bool = False) -> float | None:
    """Two-sided p-value of a paired permutation test: (1 + at least as extreme) / (1 + permutations), or
    with `exact` (`permuted` holds every sign flip, the observed one among them) at least as extreme / all."""
    kept = permuted[~np.isnan(permuted)]
    if kept.size == 0 or np.isnan(observed_value):
        return None
    extreme = int(np.count_nonzero(np.abs(kept) >= abs(observed_value) - _TOLERANCE))
    return extreme / kept.size if exact else (1 + extreme) / (1 + kept.size)


def smallest_p(n: int, exact: bool, resamples: int) -> float:
    """The smallest p the test can give: 2/2^n over n items (the observed flip and its mirror are always
    as extreme), and no less than 1/(1 + permutations) for a Monte Carlo estimate."""
    floor = 2.0 / 2.0 ** min(n, 1023) if n else 1.0
    return min(1.0, floor if exact else max(floor, 1.0 / (1 + resamples)))


@dataclass(frozen=True)
class Difference:
    """A against B on the items both have a value for: their means, A - B, its bootstrap interval, the
    permutation p-value (`exact`: over every sign flip), the number of items (None where the resamples give
    nothing), and the verdict read from them (`verdict`)."""

    a: float | None
    b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    p: float | None
    n: int
    exact: bool = False
    verdict: str = "-"


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def verdict(found: Difference, settings: Resampling) -> str:
    """Which run is higher, when the evidence shows it: the interval excludes 0 on that side, p is at most
    1 - confidence, and the test could reach that level with these items; else why not."""
    ci, p, diff = found.ci, found.p, found.diff
    if ci is None or p is None or diff is None:
        return "-"
    if ci[0] == ci[1] == diff == 0:
        return "no difference"
    level = 1 - settings.confidence
    floor = smallest_p(found.n, found.exact, settings.resamples)
    if floor > level + 1e-12:
        if found.exact or 2.0 / 2.0 ** min(found.n, 1023) > level:
            return f"too few items (n = {found.n}: p >= {floor:.3g} whatever the answers)"
        return (
            f"too few resamples (p >= {floor:.3g}: use --bootstrap {math.ceil(round(1 / level, 9))} or more)"
        )
    side = "A higher" if ci[0] > 0 else "B higher" if ci[1] < 0 else None
    if side is None:
        return "unclear: interval holds 0"
    if p > level + 1e-12:
        return f"unclear: p = {p:.3g} above {level:.3g}"
    return side


def _exact_flips(differences: Mapping[str, TaskItems], layout: Layout) -> dict[str, dict[str, Array]]:
    """Every sign flip's means of each task's and group's column (a group's avg: of its parts) that has at
    most `EXACT_ITEMS` items with a value."""
    entries = [(t, [t], False) for t in differences]
    entries += [(g, [m for m in ms if m in differences], True) for g, ms in layout.groups.items()]
    found: dict[str, dict[str, Array]] = {}
    for entry, members, group in entries:
        columns = list(dict.fromkeys(c for m in members for c in differences[m].columns))
        columns += list(layout.derived) if group else []
        for column in columns:
            parts = list(layout.derived.get(column, [column])) if group else [column]
            held = {m: restricted(differences[m], parts) for m in members}
            held = {m: items for m, items in held.items() if items.columns}
            if not held or sum(valued(i) for i in held.values()) > EXACT_ITEMS:
                continue
            alone = Layout({entry: list(held)}, layout.pooled, layout.derived) if group else Layout()
            flips = means(all_sign_flips(held), alone).get(entry, {})
            if column in flips:
                found.setdefault(entry, {})[column] = flips[column]
    return found


def paired_differences(
    tasks: Mapping[str, tuple[Array, Array, tuple[str, ...]]], layout: Layout, settings: Resampling
) -> dict[str, dict[str, Difference]]:
    """Per task and group (`layout`) and column: A's and B's means on the items both have a value for, the
    difference, its paired bootstrap interval and paired permutation p-value (exact over few items), and the
    verdict. `tasks` gives each task's (a, b, columns): A's and B's values per item (rows, the same items in
    the same order) and column."""
    seen: dict[str, Sums] = {}
    resampled: dict[str, Sums] = {}
    flipped: dict[str, Sums] = {}
    differences: dict[str, TaskItems] = {}
    for task, (a, b, columns) in tasks.items():
        both = ~np.isnan(a) & ~np.isnan(b)
        a, b = np.where(both, a, np.nan), np.where(both, b, np.nan)
        seen[task] = observed(TaskItems(np.stack([a, b, a - b]), columns))
        differences[task] = TaskItems((a - b)[None], columns)
    if settings.resamples > 0:
        for task, items in differences.items():
            resampled[task] = bootstrap(items, settings, task, layout.derived)
            flipped[task] = sign_flips(items, settings, task)
    point = means(seen, layout)
    spread = means(resampled, layout) if resampled else {}
    permuted = means(flipped, layout) if flipped else {}
    exact = _exact_flips(differences, layout) if settings.resamples > 0 else {}
    numbers = counts(seen, layout)
    found: dict[str, dict[str, Difference]] = {}
    for entry, columns_of in point.items():
        found[entry] = {}
        for column, values in columns_of.items():
            diff = float(values[0, 2])
            enumerated = column in exact.get(entry, {})
            flips = exact[entry][column] if enumerated else permuted[entry][column] if permuted else None
            plain = Difference(
                a=_number(values[0, 0]),
                b=_number(values[0, 1]),
                diff=_number(diff),
                ci=interval(spread[entry][column][:, 0], settings.confidence) if spread else None,
                p=None if flips is None else permutation_p(diff, flips[:, 0], enumerated),
                n=numbers[entry][column],
                exact=enumerated,
            )
            found[entry][column] = replace(plain, verdict=verdict(plain, settings))
    return found
