"""The length-controlled win rate with its bootstrap interval: ours against the obvious way.

Ours (`rolebench.judging.length_control.length_controlled`): one penalised Newton solve for every resample at
once (numpy, resamples x pairs weights). The obvious way, as AlpacaEval fits its GLM: scikit-learn's
`LogisticRegression` on the pairs duplicated with soft-label sample weights, refit once per resample in a
loop. Both fit the same model (L2, C = 100 on both weights, soft targets): the point estimates must agree.
Reported per case: seconds for the estimate and its interval (`resamples` refits), the ratio, and the gap
between the two estimates.

    python -m benchmarks.bench_length_control [--pairs 1000,5000] [--resamples 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from statistics import NormalDist
from typing import Any

import numpy as np

from rolebench.judging.length_control import C, length_controlled


def judged_pairs(n: int, seed: int = 0) -> tuple[list[float], list[float], list[float]]:
    """Outcomes of a judge that leans to the longer answer, for a model longer in about 70% of pairs."""
    rng = np.random.default_rng(seed)
    shift = 80 * 2**0.5 * NormalDist().inv_cdf(0.7)
    model = np.maximum(4, rng.normal(220 + shift, 80, n)).round()
    baseline = np.maximum(4, rng.normal(220, 80, n)).round()
    delta = model - baseline
    p = 1 / (1 + np.exp(-(0.3 + 2.0 * np.tanh(delta / delta.std(ddof=1)))))
    outcomes = np.where(rng.random(n) < p, 1.0, np.where(rng.random(n) < 0.3, 0.5, 0.0))
    return outcomes.tolist(), model.tolist(), baseline.tolist()


def sklearn_way(scores: list[float], model: list[float], baseline: list[float], resamples: int) -> float:
    """AlpacaEval's recipe with scikit-learn, one fit per resample; returns the point estimate."""
    from sklearn.linear_model import LogisticRegression

    y = np.asarray(scores)
    delta = np.asarray(model) - np.asarray(baseline)
    x = np.tanh(delta / delta.std(ddof=1))
    design = np.column_stack([np.ones_like(x), x])
    rng = np.random.default_rng(0)

    def fit(weights: np.ndarray) -> float:
        doubled = np.vstack([design, design])
        labels = np.concatenate([np.ones_like(y), np.zeros_like(y)])
        sample_weight = np.concatenate([y * weights, (1 - y) * weights])
        regression = LogisticRegression(C=C, fit_intercept=False, tol=1e-10, max_iter=1000)
        regression.fit(doubled, labels, sample_weight=sample_weight)
        return float(1 / (1 + np.exp(-regression.coef_[0][0])))

    estimate = fit(np.ones_like(y))
    boot = [fit(rng.multinomial(len(y), np.full(len(y), 1 / len(y))).astype(float)) for _ in range(resamples)]
    np.quantile(boot, [0.025, 0.975])
    return estimate


def best_of(repeat: int, call: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default="1000,5000", help="comma-separated numbers of judged pairs")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for n in (int(p) for p in args.pairs.split(",")):
        scores, model, baseline = judged_pairs(n)
        boot = {"resamples": args.resamples, "confidence": 0.95, "seed": 0}
        ours_s, ours = best_of(args.repeat, partial(length_controlled, scores, model, baseline, boot))
        theirs_s, theirs = best_of(1, partial(sklearn_way, scores, model, baseline, args.resamples))
        row = {
            "pairs": n,
            "resamples": args.resamples,
            "raw_win_rate": round(sum(scores) / n, 4),
            "lc_ours": round(ours["win_rate_lc"], 6),
            "lc_sklearn": round(float(theirs), 6),
            "ours_s": round(ours_s, 3),
            "sklearn_loop_s": round(theirs_s, 3),
            "ratio": round(theirs_s / ours_s, 1),
        }
        rows.append(row)
        print(json.dumps(row))
    print("| pairs | resamples | raw | LC ours | LC sklearn | ours | sklearn, one fit per resample | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['pairs']:,} | {r['resamples']} | {r['raw_win_rate']:.4f} | {r['lc_ours']:.4f} | "
            f"{r['lc_sklearn']:.4f} | {r['ours_s']} s | {r['sklearn_loop_s']} s | **{r['ratio']}x** |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
