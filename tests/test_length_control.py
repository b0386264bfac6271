"""The length-controlled win rate (AlpacaEval 2.0's regression, `rolebench.judging.length_control`).

A judge that prefers the longer answer and nothing else gives a model whose only edge is length a raw
win rate near its share of longer answers and a length-controlled one near one half; a judge blind to
length leaves the win rate where it was. End to end, through the real `openai:` adapter and the local
fake server, whose verdicts read the two answers from the paper's ranking prompt.
"""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import random
from statistics import NormalDist

import pytest

from rolebench.judging.length_control import MIN_PAIRS, length_controlled
from rolebench.judging.outcomes import judge_fields
from rolebench.report.summary import summary_text
from rolebench.run.folder import read_results
from tests.fake_openai import Reply, fake_openai  # noqa: F401 - `fake_openai` is a fixture
from tests.test_judge import _cache, make_run, ranking, run_judge, sample, shown  # noqa: F401 - _cache: autouse

BOOT = {"resamples": 400, "confidence": 0.95, "seed": 0}


def lengths_where_the_model_is_longer(n: int, share: float, seed: int = 0) -> tuple[list[int], list[int]]:
    """(model, baseline) answer lengths in characters, drawn independently: the model's are the
    baseline's shifted up, so that it is longer in about `share` of the pairs (its only edge)."""
    rng = random.Random(seed)
    shift = 80 * 2**0.5 * NormalDist().inv_cdf(share)
    model = [max(4, round(rng.gauss(220 + shift, 80))) for _ in range(n)]
    baseline = [max(4, round(rng.gauss(220, 80))) for _ in range(n)]
    return model, baseline


def test_a_length_only_judge_gets_half_once_length_is_controlled():
    model, baseline = lengths_where_the_model_is_longer(600, 0.8)
    scores = [1.0 if m > b else 0.0 for m, b in zip(model, baseline, strict=True)]
    raw = sum(scores) / len(scores)
    fields = length_controlled(scores, model, baseline, BOOT)
    assert raw == pytest.approx(0.8, abs=0.04)
    assert fields["win_rate_lc"] == pytest.approx(0.5, abs=0.12)
    low, high = fields["win_rate_lc_ci"]
    assert low < 0.5 < high < raw  # the interval holds one half, not the raw rate
    assert fields["length_coef"] > 5  # the verdicts follow the length difference


def test_a_judge_blind_to_length_keeps_the_win_rate():
    rng = random.Random(1)
    model, baseline = lengths_where_the_model_is_longer(600, 0.8)
    scores = [rng.choice([1.0, 1.0, 1.0, 0.5, 0.0]) for _ in model]  # better answers, whatever their length
    raw = sum(scores) / len(scores)
    fields = length_controlled(scores, model, baseline, BOOT)
    assert fields["win_rate_lc"] == pytest.approx(raw, abs=0.03)
    assert abs(fields["length_coef"]) < 0.5


def test_equal_lengths_and_too_few_pairs():
    scores = [1.0, 0.5, 0.0, 1.0] * 5
    same = [100] * len(scores)
    fields = length_controlled(scores, same, same, BOOT)
    assert fields["win_rate_lc"] == pytest.approx(sum(scores) / len(scores), abs=1e-3)  # nothing to control
    few = length_controlled(scores[: MIN_PAIRS - 1], same, same, BOOT)
    assert few == {"win_rate_lc": None, "win_rate_lc_ci": None, "length_coef": None}


def test_judge_fields_carry_it_beside_the_win_rate():
    lines = [
        {"status": "judged", "outcome": o, "consistent": True, "len_model": m, "len_baseline": 100}
        for o, m in zip(["win", "loss", "tie"] * 8, range(60, 300, 10), strict=True)
    ]
    fields = judge_fields(lines, BOOT)
    assert {"win_rate", "win_rate_lc", "win_rate_lc_ci", "length_coef"} <= set(fields)
    assert fields == judge_fields(lines, BOOT)  # seeded: the same lines give the same interval


def prefers_longer(body):
    answers = shown(body)
    return ranking("model_a" if len(answers["model_a"]) >= len(answers["model_b"]) else "model_b")


def test_end_to_end_a_verbose_model_wins_raw_but_not_length_controlled(tmp_path, fake_openai):
    """The judge reads both answers from the prompt and ranks the longer first, in either order."""
    model, baseline = lengths_where_the_model_is_longer(80, 0.8, seed=3)
    records = [
        sample(i, "arr " * (m // 4), "yes " * (b // 4))
        for i, (m, b) in enumerate(zip(model, baseline, strict=True))
    ]
    run = make_run(tmp_path, {"t": records})
    run_judge(run, fake_openai(prefers_longer), concurrency=8)
    results = read_results(run)
    task = results.results["t"].model_dump()
    longer = sum(1 for m, b in zip(model, baseline, strict=True) if (m // 4) * 4 > (b // 4) * 4)
    assert task["win_rate"] == pytest.approx(longer / len(model), abs=0.02)
    assert task["win_rate"] > 0.7 and task["position_consistency"] > 0.95  # equal lengths: a tie
    assert (
        task["win_rate_lc"] == pytest.approx(0.5, abs=0.2) and task["win_rate_lc"] < task["win_rate"] - 0.15
    )
    low, high = task["win_rate_lc_ci"]
    assert low < 0.5 < high
    group = results.groups["all"].model_dump()
    assert group["win_rate_lc"] == task["win_rate_lc"]  # a one-task group
    table = summary_text(results)
    assert "LC win rate" in table and f"{task['win_rate_lc']:.4f}" in table
