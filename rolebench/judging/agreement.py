"""How far two judges agree on the same pairs: the share of equal outcomes and Cohen's kappa.

Two judges of one run (two judge folders against the RoleGPT baseline) are compared on the pairs both
judged, with the same two answers: each pair's outcome (win, tie, loss, from both orders) under one
judge against the other's. `agreement` is the share of equal outcomes; `kappa` (Cohen, 1960) corrects
it for the agreement two judges with those outcome rates would reach by chance,
`(p_o - p_e) / (1 - p_e)`, `p_e = sum_k p_A(k) p_B(k)`; it is None when chance agreement is certain (both
judges give one and the same outcome throughout). Beside them, each judge's own position consistency
(the share of pairs whose two orders agree, `rolebench.judging.outcomes.judge_fields`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

OUTCOMES = ("win", "tie", "loss")


def _judged(lines: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(line["id"]): line for line in lines if line.get("status") == "judged" and line.get("outcome")}


def _same_pair(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("output_sha", "opponent_sha") if k in a and k in b)


def agreement(lines_a: Sequence[Mapping[str, Any]], lines_b: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`{"n", "agreement", "kappa", "confusion"}` of two judges' lines on the pairs both judged."""
    judged_a, judged_b = _judged(lines_a), _judged(lines_b)
    shared = [i for i in judged_a if i in judged_b and _same_pair(judged_a[i], judged_b[i])]
    pairs = [(str(judged_a[i]["outcome"]), str(judged_b[i]["outcome"])) for i in shared]
    n = len(pairs)
    if not n:
        return {"n": 0, "agreement": None, "kappa": None, "confusion": {}}
    observed = sum(a == b for a, b in pairs) / n
    count_a, count_b = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(count_a[k] * count_b[k] for k in OUTCOMES) / (n * n)
    kappa = None if chance >= 1.0 else (observed - chance) / (1.0 - chance)
    confusion = {f"{a}/{b}": c for (a, b), c in sorted(Counter(pairs).items())}
    return {"n": n, "agreement": observed, "kappa": kappa, "confusion": confusion}
