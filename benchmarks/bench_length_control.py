"""The length-controlled win rate with its bootstrap interval: ours against the obvious way, and against
AlpacaEval's own fitting code when it is importable.

Ours (`rolebench.judging.length_control.length_controlled`): one penalised Newton solve for every resample at
once (numpy, resamples x pairs weights). The obvious way, as AlpacaEval fits its GLM: scikit-learn's
`LogisticRegression` on the pairs duplicated with soft-label sample weights, refit once per resample in a
loop. Both fit the same model (L2 penalty, C = 100 on both weights, soft targets): the point estimates must
agree. Reported per case: seconds for the estimate and its interval (`resamples` refits), the ratio, and
the two estimates.

Then, only when `alpaca_eval` is importable (it is never a dependency of rolebench: install
`alpaca-eval==0.6.6` into a scratch environment, see benchmarks/README.md), the same preferences go through
AlpacaEval's own `fit_LogisticRegressionCV` with its "length_controlled_minimal" design (the tanh length
feature and an intercept): once with our penalty (L2, C = 100, no cross-validation: C = 100 is the value that
function falls back to when it does not cross-validate), and once as every AlpacaEval config runs it (L1,
C chosen by 5-fold cross-validation). Reported: the largest gap to ours with the same penalty, and the mean
and largest gap with its cross-validated C, over `--ae-draws` samples of `--ae-pairs` pairs.

    python -m benchmarks.bench_length_control [--pairs 1000,5000] [--resamples 1000] [--repeat 3]
        [--ae-pairs 200] [--ae-draws 50]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import warnings
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


def alpaca_eval_estimates(
    scores: list[float], model: list[float], baseline: list[float]
) -> tuple[float, float]:
    """The length-controlled win rate by AlpacaEval's `fit_LogisticRegressionCV` (alpaca-eval 0.6.6):
    (with our penalty: L2, C = 100, no cross-validation; as its configs run it: L1, C cross-validated)."""
    import pandas as pd
    import sklearn
    from alpaca_eval.metrics.glm_winrate import _logistic, fit_LogisticRegressionCV

    # AlpacaEval's columns: output_1 is the baseline, output_2 the model; preference in [0, 1] is the
    # model's share; std_delta_len = (len_1 - len_2) / sd; the intercept is `not_gamed_baseline` (all 1).
    delta = np.asarray(baseline) - np.asarray(model)
    data = pd.DataFrame(
        {
            "np.tanh(std_delta_len)": np.tanh(delta / delta.std(ddof=1)),
            "not_gamed_baseline.astype(float)": 1.0,
            "preference": scores,
        }
    )
    estimates = []
    for kwargs in (
        {"n_splits": 0, "C": C, "penalty": "l2", "tol": 1e-12, "max_iter": 10_000},
        {"n_splits": 5},
    ):
        # it switches metadata routing on for the process: only for this fit; its sklearn deprecations: quiet
        with sklearn.config_context(), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            fitted = fit_LogisticRegressionCV(data, "preference", is_ytrue_proba=True, **kwargs)
        weights = dict(zip(data.columns.drop("preference"), fitted.coef_[0], strict=True))
        estimates.append(float(_logistic(weights["not_gamed_baseline.astype(float)"])))  # at delta = 0
    return estimates[0], estimates[1]


def compare_with_alpaca_eval(pairs: int, draws: int) -> dict[str, Any]:
    """Ours against AlpacaEval's code on `draws` samples of `pairs` judged pairs (seeds 0..draws-1)."""
    from importlib.metadata import version

    same, cross = [], []
    for seed in range(draws):
        scores, model, baseline = judged_pairs(pairs, seed)
        ours = length_controlled(scores, model, baseline, {"resamples": 0})["win_rate_lc"]
        theirs_same, theirs_cv = alpaca_eval_estimates(scores, model, baseline)
        same.append(abs(ours - theirs_same))
        cross.append(abs(ours - theirs_cv))
    return {
        "alpaca_eval": version("alpaca_eval"),
        "pairs": pairs,
        "draws": draws,
        "same_penalty_max_gap": float(max(same)),
        "cross_validated_mean_gap": round(float(np.mean(cross)), 4),
        "cross_validated_max_gap": round(float(max(cross)), 4),
    }


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
    parser.add_argument("--ae-pairs", type=int, default=200, help="pairs per draw against AlpacaEval's code")
    parser.add_argument("--ae-draws", type=int, default=50, help="draws against AlpacaEval's code")
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
    if importlib.util.find_spec("alpaca_eval") is None:
        print("alpaca_eval is not importable: the comparison with AlpacaEval's own code is skipped")
        return 0
    found = compare_with_alpaca_eval(args.ae_pairs, args.ae_draws)
    print(json.dumps(found))
    print(
        f"alpaca-eval {found['alpaca_eval']}, {found['draws']} draws of {found['pairs']} pairs: same penalty "
        f"(L2, C = {C:g}) max gap {found['same_penalty_max_gap']:.1e}; its cross-validated C (L1, 5 folds) "
        f"mean gap {found['cross_validated_mean_gap']:.4f}, max {found['cross_validated_max_gap']:.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
