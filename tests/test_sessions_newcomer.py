"""A newcomer's first sessions, as README.md's sessions section tells them: `rolebench evaluate` on a session
task only (scripted candidate, opponent and judge servers on 127.0.0.1, tests/sessions_servers.py), then
`rolebench report` and `rolebench leaderboard build` on it. What they read must say what it means: the
end-of-run table explains its columns, the report and the leaderboard page of a sessions-only run show no
empty single-turn sections, and `leaderboard build` counts the session runs it ranked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rolebench.cli.main import main
from tests.fake_openai import FakeOpenAI
from tests.sessions_runs import session_run
from tests.sessions_servers import evaluate_argv, judge_server, players_server, write_roles

TASK = "rolebench_eng_sessions"


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    players, judging = players_server(), judge_server()
    yield players, judging
    players.stop()
    judging.stop()


def _evaluate(servers: tuple[FakeOpenAI, FakeOpenAI], data: Path, run: Path, model: str) -> int:
    return main(evaluate_argv(*servers, data, run, model=model))


@pytest.fixture
def runs(servers, tmp_path) -> list[Path]:
    """Two sessions-only runs of the standard plan (Ann: win, tie, loss; Bob: loss, win, failure), two
    candidates against the same opponent and judge."""
    data = write_roles(tmp_path / "data")
    found = [tmp_path / "cand", tmp_path / "other"]
    for run, model in zip(found, ("cand", "other"), strict=True):
        assert _evaluate(servers, data, run, model) == 0
    return found


def test_the_end_of_run_table_explains_its_columns(servers, tmp_path, capsys):
    assert _evaluate(servers, write_roles(tmp_path / "data"), tmp_path / "run", "cand") == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("| session task"))
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    assert columns == [
        "session task",
        "done",
        "turns",
        "win rate",
        "95% CI",
        "W/T/L",
        "failed",
        "as model_a / model_b",
        "flags",
    ]
    row = next(line for line in printed.splitlines() if line.startswith(f"| {TASK}"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # 2 sessions over of 2; 6 turns played: 2 wins, 1 tie, 2 losses, 1 failed turn; 2 / 4 decided won
    assert cells[1:4] == ["2/2", "6", "0.5000"] and cells[5:7] == ["2/1/2", "1"]
    legend = printed.split(row, 1)[1].splitlines()[1]
    for column in ("done:", "turns:", "win rate:", "W/T/L:", "failed:", "as model_a / model_b:"):
        assert column in legend, column


def test_a_sessions_only_build_counts_session_runs_not_empty_boards(runs, tmp_path, capsys):
    out = tmp_path / "board"
    assert main(["leaderboard", "build", *map(str, runs), "--out", str(out)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "2 session run(s) in 1 session board(s); wrote:"
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "ROUGE-L" not in page and "length-inflated" not in page
    assert "Role-play sessions past one turn" in page and "W/T/L: turns won, tied, lost" in page


def test_a_build_with_both_kinds_counts_both(tmp_path, capsys):
    mixed = session_run(tmp_path / "mixed")  # one single-turn task and a session task
    assert main(["leaderboard", "build", str(mixed), "--out", str(tmp_path / "board")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    # the run's single-turn rows on one board (no paper board for its split)
    assert first == "3 rows in 1 boards (+0 paper boards), 1 session run(s) in 1 session board(s); wrote:"


def test_the_report_of_a_sessions_only_run_shows_the_sessions_and_no_empty_sections(runs):
    assert main(["report", str(runs[0])]) == 0
    page = (runs[0] / "report.html").read_text(encoding="utf-8")
    assert "<h2>Metrics</h2>" not in page and "<h2>Floors</h2>" not in page
    assert "No answers to measure" not in page and "rolebench score DIR" not in page
    assert f'id="sessions-{TASK}"' in page and "Transcripts (2)" in page
    assert "W won, T tied, L lost, F failed" in page and "<h2>Config</h2>" in page
