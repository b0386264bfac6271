"""Throughput beside latency (issue 36.4): the answers a run generated per second of wall-clock time, added
up over the commands that generated them, never counting answers read back from the store."""

# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import json

import pytest

from rolebench.cli.main import main
from rolebench.run.folder import read_results
from tests.fake_openai import fake_openai  # noqa: F401 - a fixture

TASK = "rolebench_demo_general"


def timing(out):
    context = read_results(out).results[TASK].context
    return context.n_wall, context.wall_seconds, context.answers_per_s


def test_throughput_counts_generated_answers_over_wall_time(fake_openai, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = fake_openai(lambda body: "Aye, so it is.")
    out = tmp_path / "run"
    command = ["evaluate", "--model", f"openai:fake-model@{server.base_url}", "--tasks", TASK,
               "--output", str(out), "--no-progress"]  # fmt: skip
    assert main([*command, "--limit", "4"]) == 0
    printed = capsys.readouterr().out
    answers, seconds, rate = timing(out)
    assert answers == 4 and seconds > 0 and rate == pytest.approx(answers / seconds, rel=1e-3)
    assert "answers/s" in printed and "latency s" in printed
    # the same command again reads every answer from the store: nothing generated, the throughput kept
    assert main([*command, "--limit", "4"]) == 0
    assert timing(out) == (answers, seconds, rate) and server.count() == 4
    # a larger sample generates 2 more answers: they and their time are added
    assert main([*command, "--limit", "6"]) == 0
    more, longer, _ = timing(out)
    assert more == 6 and longer > seconds and server.count() == 6
    # run.json lost: the record read back from results.json keeps the timing
    (out / "run.json").unlink()
    assert main(["score", str(out)]) == 0
    assert timing(out)[:2] == (more, longer)
    board = tmp_path / "board"
    assert main(["leaderboard", "build", str(out), "--out", str(board)]) == 0
    table = (board / "leaderboard.md").read_text(encoding="utf-8")
    assert "Prompt tok · latency s · answers/s" in table
    row = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    rates = [r["answers_per_s"] for b in row["boards"] for r in b["rows"] if r.get("answers_per_s")]
    assert rates == [pytest.approx(more / longer, rel=1e-3)]


def test_an_older_run_json_without_timing_shows_no_throughput(tmp_path):
    from rolebench.run.record import generation_times

    assert generation_times(None) == {}
    assert generation_times({"t": {"answers": 3, "seconds": 1.5}, "u": {"answers": "x"}}) == {
        "t": {"answers": 3, "seconds": 1.5}
    }
