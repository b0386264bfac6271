"""Which samples `--limit N` evaluates: a seeded sample stratified over roles, or the first N rows.

The stratified sample is a prefix of one fixed order: roles take turns by the Sainte-Laguë rule (the
next place goes to the role with the largest `size / (2 * taken + 1)`), so every role gets its share
of N, and inside a role samples come in the order of a seeded hash of their id. Taking a prefix makes
it stable: a larger N keeps every sample a smaller N chose, so a run extended from `--limit 30` to
`--limit 60` reuses the first 30 answers. The result is returned in dataset order.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from rolebench.data.samples import Sample

LimitMode = Literal["stratified", "first"]
LIMIT_MODES: tuple[LimitMode, ...] = ("stratified", "first")


def _rank(seed: int, sample: Sample) -> str:
    return hashlib.sha256(f"{seed}\0{sample.split}\0{sample.id}".encode()).hexdigest()


def stratified_order(samples: Sequence[Sample], seed: int = 0) -> list[Sample]:
    """Every sample, in the order `--limit` takes them (see the module docstring)."""
    by_role: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_role[sample.role].append(sample)
    queues = {role: sorted(rows, key=lambda s: _rank(seed, s)) for role, rows in by_role.items()}
    taken = dict.fromkeys(queues, 0)
    order: list[Sample] = []
    while len(order) < len(samples):
        role = max(
            (r for r in queues if taken[r] < len(queues[r])),
            key=lambda r: (len(queues[r]) / (2 * taken[r] + 1), r),
        )
        order.append(queues[role][taken[role]])
        taken[role] += 1
    return order


def select(
    samples: Sequence[Sample], limit: int | None, mode: LimitMode = "stratified", seed: int = 0
) -> list[Sample]:
    """The samples to evaluate under `--limit`, in dataset order (all of them without a limit)."""
    if limit is None or limit >= len(samples):
        return list(samples)
    if mode == "first":
        return list(samples[:limit])
    chosen = {s.id for s in stratified_order(samples, seed)[:limit]}
    return [s for s in samples if s.id in chosen]
