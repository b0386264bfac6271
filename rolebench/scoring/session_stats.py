"""The numbers of one task's sessions: the win rate against the opponent, position bias, judges' agreement.

The win rate is RPBench-Auto's: the candidate's wins over the turns decided either way (ties and
failures left out, and counted apart), with a percentile-bootstrap interval that resamples whole
sessions (a session's turns are not independent); `win_rate_ties_half` counts a tie as half a win
beside it. Position bias is seen in the share of decided turns won by the answer shown as model_a, and
in the candidate's win rate in each placement. Two judges agree or not on the turns both judged with the
same two answers (the same history): the share of equal outcomes and Cohen's kappa, as
`rolebench.judging.agreement` computes them for the single-turn judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rolebench.scoring.stats import percentile_interval

OUTCOMES = {"candidate": "win", "tie": "tie", "opponent": "loss"}


def _turns(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The judged turns (opening lines are not turns)."""
    return [r for r in records if int(r["turn"]) > 0]


def _rate(wins: float, decided: float) -> float | None:
    return wins / decided if decided else None


def _bootstrap(
    per_session: np.ndarray, resamples: int, confidence: float, seed: int
) -> tuple[float, float] | None:
    """Interval of sum(wins) / sum(decided) over sessions resampled with replacement (rows: sessions)."""
    if len(per_session) < 2 or resamples < 1:
        return None
    draws = np.random.default_rng(seed)
    picks = draws.integers(0, len(per_session), (resamples, len(per_session)))
    sums = per_session[picks].sum(axis=1)  # (resamples, 2): wins, decided
    rates = [float(w / d) for w, d in sums if d > 0]
    return percentile_interval(rates, confidence) if rates else None


def _placement_shares(turns: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    decided = [t for t in turns if t["winner"] in ("candidate", "opponent")]
    first_won = sum(t["placement"]["model_a"] == t["winner"] for t in decided)
    found: dict[str, Any] = {"model_a_won": _rate(first_won, len(decided))}
    for label in ("model_a", "model_b"):
        placed = [t for t in decided if t["placement"][label] == "candidate"]
        wins = sum(t["winner"] == "candidate" for t in placed)
        found[f"candidate_as_{label}"] = {"win_rate": _rate(wins, len(placed)), "n": len(placed)}
    return found


def session_summary(
    records: Sequence[Mapping[str, Any]], *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> dict[str, Any]:
    """The numbers of one task's kept turns (any order; see the module docstring)."""
    turns = _turns(records)
    counts = Counter("failure" if t["failure"] is not None else OUTCOMES[t["winner"]] for t in turns)
    sessions: dict[str, list[float]] = {}
    for turn in turns:
        row = sessions.setdefault(str(turn["item"]), [0.0, 0.0])
        row[0] += turn["winner"] == "candidate"
        row[1] += turn["winner"] in ("candidate", "opponent")
    decided = counts["win"] + counts["loss"]
    return {
        "win_rate": _rate(counts["win"], decided),
        "win_rate_ci": _bootstrap(
            np.array(list(sessions.values())).reshape(-1, 2), resamples, confidence, seed
        ),
        "win_rate_ties_half": _rate(counts["win"] + counts["tie"] / 2, decided + counts["tie"]),
        "n_sessions": len({str(r["item"]) for r in records}),
        "n_turns": len(turns),
        "wins": counts["win"],
        "losses": counts["loss"],
        "ties": counts["tie"],
        "failures": counts["failure"]
        + sum(int(r["turn"]) == 0 and r["failure"] is not None for r in records),
        "position": _placement_shares(turns),
    }


def _judged(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], Mapping[str, Any]]:
    return {(str(r["item"]), int(r["turn"])): r for r in _turns(records) if r["winner"] is not None}


def judge_agreement(
    records_a: Sequence[Mapping[str, Any]], records_b: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """`{"n", "agreement", "kappa", "confusion"}` of two judges' outcomes (win, tie, loss for the
    candidate) on the turns both judged with the same two answers; kappa is None when chance agreement
    is certain (both judges give one and the same outcome throughout)."""
    judged_a, judged_b = _judged(records_a), _judged(records_b)
    shared = [k for k in judged_a if k in judged_b and judged_a[k]["answers"] == judged_b[k]["answers"]]
    pairs = [(OUTCOMES[judged_a[k]["winner"]], OUTCOMES[judged_b[k]["winner"]]) for k in shared]
    n = len(pairs)
    if not n:
        return {"n": 0, "agreement": None, "kappa": None, "confusion": {}}
    observed = sum(a == b for a, b in pairs) / n
    count_a, count_b = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(count_a[k] * count_b[k] for k in OUTCOMES.values()) / (n * n)
    kappa = None if chance >= 1.0 else (observed - chance) / (1.0 - chance)
    confusion = {f"{a}/{b}": c for (a, b), c in sorted(Counter(pairs).items())}
    return {"n": n, "agreement": observed, "kappa": kappa, "confusion": confusion}
