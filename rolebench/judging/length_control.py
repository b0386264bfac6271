"""The length-controlled win rate: what the judge's preference would be if both answers were as long.

LLM judges prefer longer answers, so a model can buy win rate by rambling. AlpacaEval 2.0's answer
(Dubois, Galambosi, Liang and Hashimoto, "Length-Controlled AlpacaEval: A Simple Way to Debias
Automatic Evaluators", 2024, arXiv:2404.04475) is a regression: fit a logistic model of the judge's
preference with the length difference as a feature, then read the model's prediction at zero
difference. Here, per judged pair i:

    P(model preferred) = sigmoid(b0 + b1 * tanh(d_i / sd(d))),   d_i = len(model answer) - len(baseline's)

in characters, as AlpacaEval measures them. The targets are the pair outcomes of both orders combined
(win 1, tie 0.5, loss 0: a soft label, fit by its log-likelihood as AlpacaEval does), and the
length-controlled win rate is `sigmoid(b0)`, the prediction at d = 0. The fit is a ridge-penalised
Newton solve (penalty 1/C on both weights, C = 100). AlpacaEval's configs all choose C by 5-fold
cross-validation under an L1 penalty; C = 100 is only what its fitting function
(`fit_LogisticRegressionCV`) falls back to when it does not cross-validate, and a fixed C keeps a run's
number reproducible from its pairs alone. Against alpaca-eval 0.6.6's own code on the same preferences
(`benchmarks/bench_length_control.py`): the same number with the same penalty, and close to it with
its cross-validated C (the figures: benchmarks/README.md). AlpacaEval's other features are left out on
purpose: its instruction difficulty is estimated from many models' annotations of the same
instructions, and its "regularise towards the baseline" term from deliberately verbose and concise
variants of the baseline; one run has neither. The interval is a bootstrap over pairs (each resample
refit), with the run's settings.

What it does: a judge that prefers the longer answer and nothing else gives a model whose only edge is
length a raw win rate near its share of longer answers and a length-controlled one near 0.5; a judge
blind to length leaves the win rate as it was. It is an estimate: when length explains the verdicts
completely, only pairs of nearly equal length say what happens at d = 0, and the interval is wide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

C = 100.0  # inverse penalty strength: AlpacaEval's fallback when it does not cross-validate C
MIN_PAIRS = 10  # fewer judged pairs: no length-controlled number
ITERATIONS = 100
METHOD = {
    "name": "length-controlled win rate (AlpacaEval 2.0, arXiv:2404.04475)",
    "model": "logit P(model preferred) = b0 + b1 * tanh(delta_len / sd(delta_len)); read at delta_len = 0",
    "length": "characters",
    "penalty": f"ridge, C={C:g}",
    "targets": "pair outcome: win 1, tie 0.5, loss 0",
    "min_pairs": MIN_PAIRS,
}

Array = NDArray[np.float64]


def fit(x: Array, y: Array, weights: Array) -> tuple[Array, Array]:
    """(b0, b1) of the penalised logistic fit, one per row of `weights` (resamples x pairs)."""
    penalty = 1.0 / C
    b0 = np.zeros(weights.shape[0])
    b1 = np.zeros(weights.shape[0])
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(b0[:, None] + b1[:, None] * x[None, :])))
        residual = weights * (p - y[None, :])
        g0 = residual.sum(axis=1) + penalty * b0
        g1 = (residual * x).sum(axis=1) + penalty * b1
        s = weights * p * (1.0 - p)
        h00 = s.sum(axis=1) + penalty
        h01 = (s * x).sum(axis=1)
        h11 = (s * x * x).sum(axis=1) + penalty
        det = h00 * h11 - h01 * h01
        step0 = (h11 * g0 - h01 * g1) / det
        step1 = (h00 * g1 - h01 * g0) / det
        b0 -= step0
        b1 -= step1
        if float(np.max(np.abs(step0)) + np.max(np.abs(step1))) < 1e-10:
            break
    return b0, b1


def _sigmoid(value: Array) -> Array:
    result: Array = 1.0 / (1.0 + np.exp(-value))
    return result


def length_controlled(
    scores: Sequence[float],
    model_lengths: Sequence[float],
    baseline_lengths: Sequence[float],
    bootstrap: Mapping[str, Any],
) -> dict[str, Any]:
    """`win_rate_lc` (None under `MIN_PAIRS` judged pairs), its bootstrap interval `win_rate_lc_ci`, and
    `length_coef` (b1: how much the judge's verdicts follow the length difference)."""
    if len(scores) < MIN_PAIRS:
        return {"win_rate_lc": None, "win_rate_lc_ci": None, "length_coef": None}
    y = np.asarray(scores, dtype=np.float64)
    delta = np.asarray(model_lengths, dtype=np.float64) - np.asarray(baseline_lengths, dtype=np.float64)
    spread = float(delta.std(ddof=1))
    x = np.tanh(delta / spread) if spread > 0 else np.zeros_like(delta)
    b0, b1 = fit(x, y, np.ones((1, len(y))))
    resamples = int(bootstrap.get("resamples", 1000))
    confidence = float(bootstrap.get("confidence", 0.95))
    rng = np.random.default_rng(int(bootstrap.get("seed", 0)))
    interval = None
    if resamples > 0:
        counts = rng.multinomial(len(y), np.full(len(y), 1.0 / len(y)), size=resamples).astype(np.float64)
        boot = _sigmoid(fit(x, y, counts)[0])
        low, high = np.quantile(boot, [(1 - confidence) / 2, (1 + confidence) / 2])
        interval = [float(low), float(high)]
    return {
        "win_rate_lc": float(_sigmoid(b0)[0]),
        "win_rate_lc_ci": interval,
        "length_coef": float(b1[0]),
    }
