"""Session numbers: win rate and its interval, position bias, judges' agreement, and ratings equal to
RPBench-Auto's `calculate_metrics.py` on the same synthetic judgments."""

from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from rolebench.scoring.ratings import RatingsUndefined, matches_by_session, mle_elo, ratings_with_intervals
from rolebench.scoring.session_stats import judge_agreement, session_summary
from tests.sessions_scripted import RPBENCH, standard_run


def _session_matches(records, names):
    """Each session's matches, in a list."""
    return list(matches_by_session(records, names).values())


def test_counts_of_the_known_transcripts(tmp_path: Path) -> None:
    log, _ = standard_run(tmp_path)
    summary = session_summary(log.records)
    assert (summary["wins"], summary["losses"], summary["ties"], summary["failures"]) == (2, 2, 1, 1)
    assert summary["win_rate"] == 0.5 and summary["win_rate_ties_half"] == 0.5
    assert summary["n_sessions"] == 2 and summary["n_turns"] == 6
    position = summary["position"]
    decided = [r for r in log.records if r["turn"] > 0 and r["winner"] in ("candidate", "opponent")]
    assert position["model_a_won"] == sum(r["placement"]["model_a"] == r["winner"] for r in decided) / 4
    as_a, as_b = position["candidate_as_model_a"], position["candidate_as_model_b"]
    assert as_a["n"] + as_b["n"] == 4


def _record(item: str, turn: int, winner: str | None, first: str = "candidate") -> dict[str, Any]:
    second = "opponent" if first == "candidate" else "candidate"
    return {
        "item": item,
        "turn": turn,
        "placement": {"model_a": first, "model_b": second},
        "answers": {"candidate": f"c{item}{turn}", "opponent": f"o{item}{turn}"},
        "winner": winner,
        "failure": None if winner else "no JSON object in the reply",
    }


def test_win_rate_interval_resamples_sessions() -> None:
    draw = random.Random(1)
    records = [
        _record(
            f"s{s}",
            t,
            draw.choice(["candidate", "candidate", "opponent", "tie"]),
            draw.choice(["candidate", "opponent"]),
        )
        for s in range(40)
        for t in range(1, 6)
    ]
    summary = session_summary(records, seed=3)
    low, high = summary["win_rate_ci"]
    assert low < summary["win_rate"] < high and high - low < 0.3
    assert session_summary(records, seed=3)["win_rate_ci"] == (low, high)
    position = summary["position"]
    shown_first = [r for r in records if r["winner"] in ("candidate", "opponent")]
    assert position["model_a_won"] == pytest.approx(
        sum(r["placement"]["model_a"] == r["winner"] for r in shown_first) / len(shown_first)
    )


def test_judges_agreement_on_the_same_turns() -> None:
    judge_a = [
        _record("x", 1, "candidate"),
        _record("x", 2, "opponent"),
        _record("y", 1, "tie"),
        _record("y", 2, "candidate"),
    ]
    judge_b = [
        _record("x", 1, "candidate"),
        _record("x", 2, "candidate"),
        _record("y", 1, "tie"),
        _record("z", 1, "tie"),
    ]
    judge_b[-1]["answers"] = {"candidate": "other", "opponent": "answers"}
    found = judge_agreement(judge_a, judge_b)
    # 3 shared turns: win/win, loss/win, tie/tie; chance = (1*2 + 1*1 + 0) / 9
    assert found["n"] == 3 and found["agreement"] == pytest.approx(2 / 3)
    assert found["kappa"] == pytest.approx((2 / 3 - 3 / 9) / (1 - 3 / 9))
    assert found["confusion"] == {"loss/win": 1, "tie/tie": 1, "win/win": 1}


def test_ratings_by_hand() -> None:
    ratings = mle_elo([("a", "b", "a")] * 3 + [("b", "a", "b")])  # a wins 3 of 4: P = 0.75
    gap = 400 * math.log10(3)
    assert ratings["a"] == pytest.approx(1000 + gap / 2, abs=1e-9) and ratings["b"] == pytest.approx(
        1000 - gap / 2
    )
    with pytest.raises(RatingsUndefined, match="won every match or lost every match"):
        mle_elo([("a", "b", "a"), ("b", "c", "b"), ("a", "c", "a")])


def _upstream(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """RPBench-Auto's calculate_metrics.py, its missing `utils.extract_and_parse_json` given as json.loads."""
    path = RPBENCH / "calculate_metrics.py"
    if not path.is_file():
        pytest.skip(f"RPBench-Auto's calculate_metrics.py not found at {path}")
    for needed in ("pandas", "sklearn", "matplotlib"):
        pytest.importorskip(needed)
    monkeypatch.setitem(sys.modules, "utils", types.SimpleNamespace(extract_and_parse_json=json.loads))
    spec = importlib.util.spec_from_file_location("rpbench_calculate_metrics", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _synthetic(models: list[str], n: int, seed: int, ties: bool) -> list[tuple[str, str, str]]:
    draw, strength = random.Random(seed), {m: i * 0.4 for i, m in enumerate(models)}
    matches = []
    for _ in range(n):
        a, b = draw.sample(models, 2)
        p = 1 / (1 + 10 ** (strength[b] - strength[a]))
        u = draw.random()
        matches.append((a, b, "tie" if ties and u > 0.85 else a if u < p * (0.85 if ties else 1) else b))
    return matches


@pytest.mark.parametrize("ties", [False, True])
def test_ratings_equal_the_upstream_scripts(ties: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = _upstream(monkeypatch)
    matches = _synthetic(["m0", "m1", "m2", "m3"], 600, seed=5, ties=ties)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = upstream.EloCalculator(method="mle").compute_mle_elo(matches)
    ours = mle_elo(matches)
    assert set(ours) == set(expected)
    for model, rating in ours.items():
        assert rating == pytest.approx(float(expected[model]), abs=1e-3)


def test_win_rates_equal_the_upstream_scripts_on_session_judgments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same turns written as upstream judgment files: its win rate matrix holds ours."""
    upstream = _upstream(monkeypatch)
    draw = random.Random(2)
    records = [
        _record(
            f"s{s}",
            t,
            draw.choice(["candidate", "opponent", "opponent", "tie"]),
            draw.choice(["candidate", "opponent"]),
        )
        for s in range(30)
        for t in range(1, 6)
    ]
    names = {"candidate": "ours", "opponent": "gpt-4o"}
    with open(tmp_path / "judgments.jsonl", "w", encoding="utf-8") as handle:
        for r in records:
            assignment = {slot: names[side] for slot, side in r["placement"].items()}
            slot = (
                "tie"
                if r["winner"] == "tie"
                else next(s for s, side in r["placement"].items() if side == r["winner"])
            )
            reply = {"winner": slot, "next_round_user_speaks": "go on", "decision_reason": ""}
            handle.write(json.dumps({"assignment": assignment, "judger_response": json.dumps(reply)}) + "\n")
    _, matrix, models = upstream.get_metrics(str(tmp_path), elo_algo="online")  # its "mle" path cannot run:
    # get_metrics lists every match as (winner, loser, winner), one class only, which sklearn refuses
    ours = session_summary(records)["win_rate"]
    assert ours == pytest.approx(matrix[models.index("ours"), models.index("gpt-4o")], abs=1e-12)
    sessions = _session_matches(records, names)
    assert sum(len(s) for s in sessions) == 150 - sum(r["winner"] == "tie" for r in records)


def test_ratings_of_several_models_from_their_sessions() -> None:
    records = {
        ("a", "b"): ["candidate", "candidate", "opponent", "tie"],
        ("b", "c"): ["candidate", "opponent", "candidate", "candidate"],
        ("a", "c"): ["candidate", "candidate", "candidate", "opponent"],
    }
    sessions = []
    for (first, second), winners in records.items():
        names = {"candidate": first, "opponent": second}
        kept = [
            _record(f"{first}{second}{i}", 1 + i % 2, w, "candidate" if i % 3 else "opponent")
            for i, w in enumerate(winners)
        ]
        sessions += _session_matches(kept, names)
    found = ratings_with_intervals(sessions, resamples=200, seed=1)
    table = found["ratings"]
    assert list(table) == ["a", "b", "c"] and table["a"]["rank"] == 1 and found["n_matches"] == 11
    assert table["a"]["rating"] == pytest.approx(mle_elo([m for s in sessions for m in s])["a"])
    assert found["undefined_resamples"] > 0  # few sessions: some resamples leave a model unbeaten
    low, high = table["a"]["rating_ci"]
    assert low <= table["a"]["rating"] <= high or found["undefined_resamples"] == 200
