"""The leaderboard's session boards: runs played by the engine with scripted players, built through the
real command (`rolebench leaderboard build`), read back from every format it writes, rebuilt from the
built folder alone, and shown in Chromium on a phone and a desktop."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from rolebench.cli.main import main
from rolebench.leaderboard.build import build
from rolebench.leaderboard.session_turns import SESSION_TURNS_FILE
from rolebench.leaderboard.sessions import OPPONENT, collect_sessions
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import SessionLog, read_log
from rolebench.scoring.ratings import matches_by_session, mle_elo, ratings_with_intervals
from tests.sessions_rated_runs import add_task, session_run, strength_plan
from tests.test_leaderboard import chrome_driver
from tests.test_sessions_stats import _upstream

TASK = "rolebench_eng_sessions"
BIDI = "gnp\u202eexe"


def _session_matches(records, names):
    """Each session's matches, in a list."""
    return list(matches_by_session(records, names).values())


@pytest.fixture(autouse=True)
def _fewer_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 bootstrap resamples of the ratings, not 1,000: the same code, in a fifth of the time."""
    monkeypatch.setattr("rolebench.leaderboard.sessions.RESAMPLES", 200)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """alpha (strong), beta (even; one role's round 1 never parses), gamma (weak), all against the same
    opponent and judge over 3 turns; `other` played 2 turns (another board); `both` and `pair` played the
    two RPBench-Auto tasks (a group board)."""
    root = tmp_path_factory.mktemp("session-runs")
    session_run(root / "alpha", "alpha", strength_plan(3))
    session_run(root / "beta", "beta", strength_plan(2, garbage_for="Hal"))
    session_run(root / "gamma", "gamma", strength_plan(1))
    session_run(root / "other", "delta", strength_plan(2), turns=2)
    for name, wins in (("both", 3), ("pair", 1)):
        for task in ("rpbench_character", "rpbench_scene"):
            session_run(root / name, name, strength_plan(wins), task=task)
    return root


def _boards(folder: Path) -> list[dict[str, Any]]:
    boards: list[dict[str, Any]] = json.loads((folder / "leaderboard.json").read_text())["session_boards"]
    return boards


def _board(boards: list[dict[str, Any]], task: str, runs: int) -> dict[str, Any]:
    return next(
        b for b in boards if b["task"] == task and sum(r["source"] == "ours" for r in b["rows"]) == runs
    )


def _expected_ratings(root: Path, names: list[str], task: str = TASK) -> dict[str, float]:
    """The ratings computed here from the sessions files alone (the engine's functions)."""
    matches = []
    for name in names:
        turns = read_log(RunFolder(root / name).session_log_path(task))[1]
        for session in _session_matches(turns, {"candidate": name, "opponent": OPPONENT}):
            matches += session
    return mle_elo(matches)


def test_board_of_comparable_runs_rates_them_with_the_opponent(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "board"
    code = main(["leaderboard", "build", str(runs), "--out", str(out), "--no-reference"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "sessions: RoleBench roles, English · against scripted:opp · judged by scripted:judge" in printed
    assert "3 run(s)" in printed and "ranks nothing: one run played this way" in printed
    board = _board(_boards(out), TASK, 3)
    rows = {r["run"] or "opponent": r for r in board["rows"]}
    for name in ("alpha", "beta", "gamma"):  # the numbers results.json holds
        result = RunFolder(runs / name).read_results().sessions[TASK]
        row = rows[name]
        assert (row["wins"], row["ties"], row["losses"], row["failures"]) == (
            result.wins,
            result.ties,
            result.losses,
            result.failures,
        )
        assert row["win_rate_ci"] == result.win_rate_ci and row["n_complete"] == result.n_complete == 8
        assert row["as_model_a"] == result.position["candidate_as_model_a"]["win_rate"]
    assert rows["beta"]["failures"] == 1 and rows["beta"]["ties"] == 1
    expected = _expected_ratings(runs, ["alpha", "beta", "gamma"])
    for name, row in rows.items():
        assert row["rating"] == pytest.approx(expected[OPPONENT if name == "opponent" else name], abs=1e-6)
        low, high = row["rating_ci"]
        assert low <= row["rating"] <= high
        assert row["rank_interval"][0] <= row["rank"] <= row["rank_interval"][1]
    assert [r["run"] for r in board["rows"]][0] == "alpha" and board["rows"][-1]["run"] == "gamma"
    assert rows["opponent"]["source"] == "opponent" and rows["opponent"]["model"] == "scripted:opp"
    assert board["ratings"]["n_matches"] == sum(r["wins"] + r["losses"] for r in board["rows"])
    assert board["note"] == ""


def test_a_board_of_one_run_says_why_it_ranks_nothing_and_what_differs(runs: Path) -> None:
    boards = collect_sessions([runs])
    other = next(b for b in boards if b.task == TASK and any(r.run == "other" for r in b.rows))
    assert other.note == (
        "ranks nothing: one run played this way (a win rate against the opponent stands alone); "
        f"not comparable with the runs of {_board([b.to_dict() for b in boards], TASK, 3)['id']}: "
        "settings.turns differ"
    )
    assert all(r.rank is None and r.rating is None for r in other.rows) and other.turns == 2


def test_group_board_pools_the_tasks_of_the_group(runs: Path) -> None:
    boards = {b.task: b for b in collect_sessions([runs]) if b.task in ("rpbench", "rpbench_scene")}
    group, scene = boards["rpbench"], boards["rpbench_scene"]
    for name in ("both", "pair"):
        results = RunFolder(runs / name).read_results().sessions
        row = next(r for r in group.rows if r.run == name)
        assert row.wins == results["rpbench_character"].wins + results["rpbench_scene"].wins
        assert row.n_items == 16 and row.win_rate_ci is not None
    assert [r.run for r in group.rows if r.rank is not None][0] == "both"
    expected = _expected_ratings(runs, ["both", "pair"], "rpbench_scene")
    assert next(r for r in scene.rows if r.run == "pair").rating == pytest.approx(expected["pair"], abs=1e-6)


def test_every_format_shows_the_boards_and_a_rebuild_from_the_built_folder_is_the_same(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = {"alpha": BIDI, "scripted:gamma": "Gamma & <co>"}
    build([runs], tmp_path / "first", reference=False, names=names)
    first = tmp_path / "first"
    markdown = (first / "leaderboard.md").read_text()
    assert (
        "## Sessions" in markdown and "gnp\\\\u202eexe" in markdown and "Gamma &amp; &lt;co&gt;" in markdown
    )
    table = list(csv.DictReader(io.StringIO((first / "sessions.csv").read_text())))
    assert {r["run"] for r in table if r["source"] == "ours"} == {
        "alpha",
        "beta",
        "gamma",
        "other",
        "both",
        "pair",
    }
    gamma = next(r for r in table if r["run"] == "gamma" and r["task"] == TASK)
    assert gamma["model"] == "Gamma & <co>" and float(gamma["rating_low"]) <= float(gamma["rating"])
    latex = (first / "leaderboard.tex").read_text()
    assert "Gamma \\& \\textless{}co\\textgreater{}" in latex and "\\label{tab:sessions-rpbench-" in latex
    page = (first / "index.html").read_text()
    assert "Gamma &amp; &lt;co&gt;" in page and '<option value="sessions">Sessions</option>' in page
    assert "Generated from results up to 2026-11-27" in page
    kept = json.loads((first / "results" / "beta" / SESSION_TURNS_FILE).read_text())[TASK]
    assert set(kept["turns"][0]) == {"item", "turn", "placement", "winner", "failure"}  # no text
    assert "<beta>" not in (first / "results" / "beta" / SESSION_TURNS_FILE).read_text()
    build([first / "results"], tmp_path / "second", reference=False, names=names)
    assert _boards(tmp_path / "second") == _boards(first)
    assert (tmp_path / "second" / "sessions.csv").read_text() == (first / "sessions.csv").read_text()
    capsys.readouterr()
    assert main(["leaderboard", "publish", str(first), "--repo", "org/board", "--dry-run"]) == 0
    listed = capsys.readouterr().out
    assert "  sessions.csv" in listed and f"  results/beta/{SESSION_TURNS_FILE}" in listed


def test_a_sessions_file_changed_after_its_numbers_leaves_the_board_without_ratings(
    runs: Path, tmp_path: Path
) -> None:
    for name in ("alpha", "beta"):
        shutil.copytree(runs / name, tmp_path / name)
    log = RunFolder(tmp_path / "beta").session_log_path(TASK)
    log.write_bytes(log.read_bytes() + log.read_bytes().splitlines(keepends=True)[-1])
    (board,) = collect_sessions([tmp_path])
    assert board.note == (
        "no ratings: the turns of beta are not found (sessions/<task>.jsonl), or are not those its numbers "
        "came from"
    )
    assert all(r.rating is None for r in board.rows)


@pytest.mark.parametrize("width", [390, 1280])
def test_session_boards_read_well_in_chromium(runs: Path, tmp_path: Path, width: int) -> None:
    build([runs], tmp_path / "board", names={"alpha": "a model with a rather long name, fine-tuned " * 2})
    driver = chrome_driver(tmp_path / "chrome")
    try:
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        driver.get((tmp_path / "board" / "index.html").as_uri())
        page = driver.execute_script(
            "return [document.documentElement.scrollWidth, [...document.querySelectorAll("
            "'section.sessions .scroll')].map(e => [e.getBoundingClientRect().right, e.scrollWidth > "
            "e.clientWidth])]"
        )
        driver.find_element("css selector", "#split-filter option[value='sessions']").click()
        shown = driver.execute_script(
            "return [...document.querySelectorAll('section.board')].filter(s => !s.hidden).map(s => "
            "s.dataset.split)"
        )
        board = driver.find_element(  # the largest board of the task comes first
            "css selector", f"section.sessions table.lb[data-board^='sessions-{TASK}-']"
        )
        board.find_elements("css selector", "th")[2].click()  # Rating, highest first
        models = [c.text for c in board.find_elements("css selector", "tr.row td:nth-child(2) .model")]
    finally:
        driver.quit()
    assert page[0] <= width  # the page is never wider than the window; a wide board scrolls in its box
    assert page[1] and all(right <= width for right, _ in page[1])
    assert any(scrolls for _, scrolls in page[1]) == (width < 600)
    assert shown and set(shown) == {"sessions"}
    assert models[0].startswith("a model with a rather long name") and models[-1] == "scripted:gamma"


# ---- ratings equal to RPBench-Auto's calculate_metrics.py ------------------------------------------------


def _synthetic_run(
    folder: Path, name: str, strength: float, draw: random.Random
) -> list[tuple[str, str, str]]:
    """A run of 40 five-turn sessions against the shared opponent with judgments drawn at random (the
    candidate wins a turn with probability `strength`, ties some, fails a few), written as the engine
    writes them; the decided matches as upstream lists them: (model_a, model_b, winner)."""
    head = {
        "players": {"candidate": {"spec": name}, "opponent": {"spec": "opp"}, "judge": {"spec": "judge"}},
        "settings": {"turns": 5, "seed": 0, "judge_attempts": 2},
        "templates": {},
        "data": {"roles": "synthetic"},
    }
    log = SessionLog(RunFolder(folder).session_log_path(TASK), head)
    matches = []
    for s in range(40):
        log.append({"item": f"s{s}", "turn": 0, "failure": None, "placement": None, "winner": None})
        for turn in range(1, 6):
            first = draw.choice(["candidate", "opponent"])
            placement = {"model_a": first, "model_b": "opponent" if first == "candidate" else "candidate"}
            u = draw.random()
            winner = (
                "tie" if u > 0.9 else None if u > 0.87 else "candidate" if u < strength * 0.87 else "opponent"
            )
            log.append(
                {
                    "item": f"s{s}",
                    "turn": turn,
                    "placement": placement,
                    "winner": winner,
                    "failure": "no verdict" if winner is None else None,
                }
            )
            if winner in ("candidate", "opponent"):
                names = {"candidate": name, "opponent": "opp"}
                matches.append((names[placement["model_a"]], names[placement["model_b"]], names[winner]))
    add_task(folder, TASK, head, 40, 5, name, "opp")
    return matches


def test_board_ratings_equal_the_upstream_scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = _upstream(monkeypatch)
    draw = random.Random(11)
    matches = []
    for name, strength in (("m0", 0.75), ("m1", 0.55), ("m2", 0.45), ("m3", 0.3), ("m4", 0.5)):
        matches += _synthetic_run(tmp_path / "runs" / name, name, strength, draw)
    (board,) = collect_sessions([tmp_path / "runs"], names={"scripted:opp": "the opponent"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = upstream.EloCalculator(method="mle").compute_mle_elo(matches)
    rated = {("opp" if r.source == "opponent" else r.run): r for r in board.rows}
    assert set(rated) == set(expected) and rated["opp"].model == "the opponent"
    for name, row in rated.items():
        assert row.rating == pytest.approx(float(expected[name]), abs=1e-3), name
    assert board.ratings["n_matches"] == len(matches)
    order = sorted(expected, key=lambda m: -float(expected[m]))
    assert [("opp" if r.source == "opponent" else r.run) for r in board.rows] == order
    assert all(r.rank_interval and r.rank_interval[0] <= r.rank <= r.rank_interval[1] for r in board.rows)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ({"turns": "none"}, "no list of session turns"),
        ({"turns": [{"item": "Ann", "turn": 1, "placement": None, "winner": "candidate"}]}, "turn 1 is not"),
        ({"turns": [{"item": "Ann", "turn": "1", "placement": None, "winner": None}]}, "turn 1 is not"),
    ],
)
def test_a_damaged_session_turns_file_is_refused_in_one_line(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: dict[str, Any], said: str
) -> None:
    build([runs / "alpha", runs / "beta"], tmp_path / "first", reference=False)
    kept = tmp_path / "first" / "results" / "beta" / SESSION_TURNS_FILE
    document = json.loads(kept.read_text())
    document[TASK] = {**document[TASK], **damage}
    kept.write_text(json.dumps(document))
    code = main(
        ["leaderboard", "build", str(tmp_path / "first" / "results"), "--out", str(tmp_path / "again")]
    )
    captured = capsys.readouterr()
    assert code != 0 and said in captured.err and len(captured.err.strip().splitlines()) == 1
    assert f"{SESSION_TURNS_FILE} ({TASK})" in captured.err


def test_rating_intervals_draw_items_with_every_run_s_session_on_them() -> None:
    """With one item in all, every resample draws every session: the intervals are the point itself."""
    sessions = [
        [("a", "o", "a"), ("o", "a", "o")],
        [("b", "o", "o"), ("b", "o", "b")],
        [("a", "o", "a"), ("o", "b", "b"), ("o", "a", "o")],
    ]
    joint = ratings_with_intervals(sessions, resamples=50, items=["x", "x", "x"])
    for found in joint["ratings"].values():
        assert found["rating_ci"] == pytest.approx([found["rating"], found["rating"]])
    apart = ratings_with_intervals(sessions, resamples=50)  # each session drawn on its own
    assert any(f["rating_ci"] != pytest.approx([f["rating"]] * 2) for f in apart["ratings"].values())
