"""Ratings of several models from their sessions: Bradley-Terry by maximum likelihood, on the Elo scale.

The same estimate as RPBench-Auto's `calculate_metrics.py` (`EloCalculator.compute_mle_elo`): a match
`(model_a, model_b, winner)` is a Bernoulli draw with `P(a beats b) = 1 / (1 + base^((R_b - R_a) / scale))`;
a tie is half a win for each; the ratings maximise the likelihood and, as there (an unpenalised logistic
regression without intercept, solved from zero), average `init` (1000). Here it is solved by Newton's
method in the ratings' own space, the average held at `init`. Like the upstream script
the matches of sessions leave ties and failures out (`matches_by_session`); the upstream bootstrap
resamples matches at random without a seed, this one resamples whole sessions with a seed (the turns of
one session are not independent). Ratings exist only when every model has won and lost within one
connected set (else the likelihood grows without bound): `RatingsUndefined` says which model is not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rolebench.scoring.stats import percentile_interval

Match = tuple[str, str, str]  # (model_a, model_b, winner: a model, or "tie")
SCALE, BASE, INIT = 400.0, 10.0, 1000.0


class RatingsUndefined(ValueError):
    """The matches hold no finite maximum-likelihood ratings; the message names why."""


def _reach(edges: Mapping[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), set()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def _check_defined(models: Sequence[str], matches: Sequence[Match]) -> None:
    """Every model reaches every other through "beat or tied" links (the beats graph strongly connected)."""
    beat: dict[str, set[str]] = {}
    for a, b, winner in matches:
        if winner in (a, "tie"):
            beat.setdefault(a, set()).add(b)
        if winner in (b, "tie"):
            beat.setdefault(b, set()).add(a)
    if len(models) < 2 or len(_reach(beat, models[0])) < len(models):
        raise RatingsUndefined(
            f"{len(models)} model(s) and not every one has both won and lost within one set"
        )
    back = {m: {n for n, wins in beat.items() if m in wins} for m in models}
    if len(_reach(back, models[0])) < len(models):
        raise RatingsUndefined("some model won every match or lost every match against the others")


def _loss(design: np.ndarray, score: np.ndarray, weight: np.ndarray, beta: np.ndarray) -> float:
    """The negative log-likelihood of the ratings `beta` (log(1 + e^-x) computed without overflow)."""
    margin = design @ beta
    return float(weight @ (score * np.logaddexp(0.0, -margin) + (1.0 - score) * np.logaddexp(0.0, margin)))


def mle_elo(
    matches: Sequence[Match], *, scale: float = SCALE, base: float = BASE, init: float = INIT
) -> dict[str, float]:
    """Each model's rating (see the module docstring), in order of first appearance. The matches of one
    ordered pair (model_a, model_b) enter the likelihood together (their count and mean score): the same
    likelihood as one row per match, solved in a time that grows with the pairs, not the matches."""
    models = list(dict.fromkeys(name for a, b, _ in matches for name in (a, b)))
    _check_defined(models, matches)
    index = {name: i for i, name in enumerate(models)}
    pairs: dict[tuple[str, str], list[float]] = {}
    for a, b, winner in matches:
        tally = pairs.setdefault((a, b), [0.0, 0.0])
        tally[0] += 1.0
        tally[1] += 1.0 if winner == a else 0.5 if winner == "tie" else 0.0
    design = np.zeros((len(pairs), len(models)))
    rows = np.arange(len(pairs))
    design[rows, [index[a] for a, _ in pairs]] += math.log(base)
    design[rows, [index[b] for _, b in pairs]] -= math.log(base)
    weight = np.array([count for count, _ in pairs.values()])
    score = np.array([won / count for count, won in pairs.values()])
    beta = np.zeros(len(models))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (weight * (p - score))
        hessian = design.T @ (design * (weight * p * (1.0 - p))[:, None])
        step = np.linalg.pinv(hessian, hermitian=True) @ gradient
        decrement = float(
            gradient @ step
        )  # Newton's decrement: twice the loss still to gain, near the optimum
        if decrement < 1e-20:
            break
        size, before = 1.0, _loss(design, score, weight, beta)
        # far from the optimum Newton's full step may overshoot: a shorter one. Near it (a decrement below
        # what the loss's rounding can show) the full step is taken: the loss cannot tell the steps apart
        while (
            decrement > 1e-9
            and size > 1e-10
            and _loss(design, score, weight, beta - size * step) > before - 0.25 * size * decrement
        ):
            size /= 2.0
        beta -= size * step
        beta -= beta.mean()  # the likelihood is blind to a shift: keep the average where upstream's is
    return {name: float(scale * beta[index[name]] + init) for name in models}


def matches_by_session(
    records: Sequence[Mapping[str, Any]], names: Mapping[str, str]
) -> dict[str, list[Match]]:
    """Each session's matches from its kept turns (as `SessionLog.sessions` gives them, any order), by
    item id: `(name shown as model_a, name shown as model_b, winner's name)` per decided turn; `names`
    maps "candidate" and "opponent" to the models' names."""
    sessions: dict[str, list[Match]] = {}
    for record in records:
        if record.get("winner") in ("candidate", "opponent"):
            placed = record["placement"]
            match = (names[placed["model_a"]], names[placed["model_b"]], names[record["winner"]])
            sessions.setdefault(str(record["item"]), []).append(match)
    return sessions


def _ranks(ratings: Mapping[str, float]) -> dict[str, int]:
    """Competition ranks: 1 + the number of models rated higher."""
    return {m: 1 + sum(other > r for other in ratings.values()) for m, r in ratings.items()}


def ratings_with_intervals(
    sessions: Sequence[Sequence[Match]],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    items: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The ratings of every model in `sessions`, each with its bootstrap interval and rank interval
    (sessions resampled; a resample without finite ratings is skipped and counted). `items`: each
    session's item; then the items are drawn, and each drawn item brings every session played on it (the
    models compared on the same draw of items, as the single-turn boards rank theirs)."""
    pooled = [match for session in sessions for match in session]
    try:
        point = mle_elo(pooled)
    except RatingsUndefined as why:
        return {"ratings": None, "why": str(why), "n_matches": len(pooled)}
    clusters: dict[str, list[int]] = {}
    for index, item in enumerate(items if items is not None else map(str, range(len(sessions)))):
        clusters.setdefault(item, []).append(index)
    members = list(clusters.values())
    draws = np.random.default_rng(seed)
    rated: list[dict[str, float]] = []
    skipped = 0
    for _ in range(resamples):
        picked = draws.integers(0, len(members), len(members))
        try:
            rated.append(mle_elo([m for c in picked for i in members[c] for m in sessions[i]]))
        except RatingsUndefined:
            skipped += 1
    table: dict[str, Any] = {}
    for model, rating in sorted(point.items(), key=lambda item: -item[1]):
        values = [r[model] for r in rated if model in r]
        ranks = [_ranks(r)[model] for r in rated if model in r]
        table[model] = {
            "rating": rating,
            "rating_ci": percentile_interval(values, confidence) if values else None,
            "rank": _ranks(point)[model],
            "rank_ci": percentile_interval([float(r) for r in ranks], confidence) if ranks else None,
            "matches": sum(model in m[:2] for m in pooled),
        }
    return {
        "ratings": table,
        "n_matches": len(pooled),
        "resamples": resamples,
        "undefined_resamples": skipped,
    }
