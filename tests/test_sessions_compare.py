"""`rolebench compare A B` on session tasks: runs played by the engine with scripted players, compared
through the real command and its Python function; the numbers checked against ones computed here from the
sessions files alone (every sign flip of the permutation test enumerated by hand)."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rolebench.cli.main import main
from rolebench.errors import DataError
from rolebench.report.comparison import compare_folders
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import read_log
from tests.sessions_rated_runs import session_run, strength_plan
from tests.test_compare import evaluate

TASK = "rolebench_eng_sessions"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare-sessions")
    session_run(root / "alpha", "alpha", strength_plan(3))
    session_run(root / "gamma", "gamma", strength_plan(1))
    session_run(root / "short", "delta", strength_plan(2), turns=2)
    session_run(root / "fewer", "beta", strength_plan(2), names=("Ann", "Bob", "Cid"))
    for name, baseline, wins in (("both_a", "rolegpt", 3), ("both_b", "question", 2)):
        evaluate(root / name, f"baseline:{baseline}", "rolebench_demo")
        session_run(root / name, name, strength_plan(wins))
    return root


def _shares(folder: Path) -> dict[str, float]:
    """Each session's win share, from the sessions file alone."""
    found: dict[str, list[int]] = {}
    for turn in read_log(RunFolder(folder).session_log_path(TASK))[1]:
        if turn["turn"] > 0 and turn["winner"] in ("candidate", "opponent"):
            found.setdefault(turn["item"], []).append(turn["winner"] == "candidate")
    return {item: sum(wins) / len(wins) for item, wins in found.items()}


def test_sessions_compared_over_the_sessions_both_played(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "compare.json"
    code = main(["compare", str(runs / "alpha"), str(runs / "gamma"), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "| rolebench_eng_sessions | 78.3 / 26.1" in printed and "A higher" in printed
    assert "Sessions against scripted:opp, judged by scripted:judge, 3 turns" in printed
    document = json.loads(out.read_text())
    entry = document["sessions"]["tasks"][TASK]
    a, b = _shares(runs / "alpha"), _shares(runs / "gamma")
    items = sorted(set(a) & set(b))
    differences = np.array([a[i] - b[i] for i in items])
    share = entry["win_share"]
    assert share["n"] == len(items) == 8
    assert share["a"] == pytest.approx(np.mean([a[i] for i in items]))
    assert share["b"] == pytest.approx(np.mean([b[i] for i in items]))
    assert share["diff"] == pytest.approx(differences.mean())
    flips = [
        np.mean(differences * np.array(signs)) for signs in itertools.product((1, -1), repeat=len(items))
    ]
    expected_p = np.mean([abs(f) >= abs(differences.mean()) - 1e-12 for f in flips])
    assert share["exact"] and share["p"] == pytest.approx(expected_p)
    low, high = share["ci"]
    assert low <= share["diff"] <= high and share["verdict"] == "A higher"
    results = RunFolder(runs / "alpha").read_results().sessions[TASK]
    assert entry["win_rate_a"] == pytest.approx(results.win_rate)
    same = json.loads(json.dumps(compare_folders(runs / "alpha", runs / "gamma")))
    assert same == document  # the Python function: the same document


def test_only_the_sessions_both_played_are_paired(runs: Path) -> None:
    document = compare_folders(runs / "fewer", runs / "alpha", resamples=200, seed=3)
    share = document["sessions"]["tasks"][TASK]["win_share"]
    a, b = _shares(runs / "fewer"), _shares(runs / "alpha")
    assert share["n"] == len(set(a) & set(b)) == 3
    assert share["b"] == pytest.approx(np.mean([b[i] for i in a]))
    assert document["bootstrap"]["resamples"] == 200 and document["bootstrap"]["seed"] == 3


def test_sessions_played_differently_are_refused_in_one_line(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compare", str(runs / "alpha"), str(runs / "short")])
    captured = capsys.readouterr()
    assert code != 0 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert f"the runs played {TASK} differently: settings.turns differ" in lines[0]


def test_sessions_sit_beside_the_single_turn_table(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs / "both_a"), str(runs / "both_b"), "--bootstrap", "200"]) == 0
    printed = capsys.readouterr().out
    single = printed.index("| task / group")
    sessions = printed.index("| session task")
    assert single < sessions and "rolebench_demo" in printed[:sessions]
    document = compare_folders(runs / "both_a", runs / "both_b", resamples=200)
    assert set(document["tasks"]) and TASK in document["sessions"]["tasks"]


def test_a_sessions_file_changed_after_its_numbers_is_refused(runs: Path, tmp_path: Path) -> None:
    shutil.copytree(runs / "gamma", tmp_path / "gamma")
    log = RunFolder(tmp_path / "gamma").session_log_path(TASK)
    log.write_bytes(log.read_bytes().replace(b'"winner": "opponent"', b'"winner": "candidate"', 1))
    with pytest.raises(DataError, match="the turns of B's rolebench_eng_sessions are not found"):
        compare_folders(runs / "alpha", tmp_path / "gamma")
