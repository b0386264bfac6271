"""`rolebench judge RUN --against OTHER`: two runs head to head, with the real `openai:` adapter talking
to the local fake OpenAI-compatible server (its verdicts prefer the answer marked GOOD)."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rolebench
from rolebench.cli.main import main
from rolebench.report.page import render_report
from rolebench.results.schema import RunResults
from rolebench.run.folder import read_results
from tests import run_folders
from tests.fake_openai import fake_openai  # noqa: F401 - `fake_openai` is a fixture
from tests.test_judge import FAST, GOOD, prefers_good, sample

OTHER_KEY = "hf:other-model (few-shot-dialogue, 3 shots)"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLEBENCH_CACHE", str(tmp_path / "cache"))


def make_run(folder: Path, spec: str, tasks: dict[str, list[dict[str, Any]]], **elicitation: Any) -> Path:
    """A run folder as `rolebench evaluate` writes it (tasks, one group `all`)."""
    return run_folders.make_run(folder, spec, tasks, **elicitation)


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """RUN is better on items 0-3 and worse on 4; 5 and 6 are one run's only; 7 asks another question."""
    mine = [sample(i, f"{GOOD} {i}" if i < 4 else f"meh {i}", "rolegpt") for i in (0, 1, 2, 3, 4, 6, 7)]
    theirs = [sample(i, f"{GOOD} theirs {i}" if i == 4 else f"plain {i}", "rolegpt") for i in range(6)]
    theirs.append({**sample(7, "plain 7", "rolegpt"), "question": "Another question?"})
    run = make_run(tmp_path / "run", "hf:my-model", {"t": mine, "only_mine": mine[:2]})
    other = make_run(
        tmp_path / "other", "hf:other-model", {"t": theirs}, elicitation="few-shot-dialogue", shots=3
    )
    return run, other


def versus(run: Path, other: Path, server: Any) -> RunResults:
    options = {"base_url": server.base_url, "progress": False, "judge_args": FAST, "concurrency": 4}
    return rolebench.judge(run, "openai:fake-model", against=other, **options)


def test_run_against_run_on_shared_items_both_orders_cached(tmp_path, fake_openai):
    run, other = two_runs(tmp_path)
    server = fake_openai(prefers_good)
    assert set(versus(run, other, server).config.versus or {}) == {OTHER_KEY}
    assert server.count() == 10  # 5 shared items (0-4), both orders
    results = read_results(run)
    fields = results.results["t"].value("versus")[OTHER_KEY]
    assert (fields["wins"], fields["ties"], fields["losses"], fields["judged"]) == (4, 0, 1, 5)
    assert fields["win_rate"] == pytest.approx(0.8) and fields["n_shared"] == 5
    low, high = fields["win_rate_ci"]
    assert low <= 0.8 <= high
    assert "win_rate_lc" in fields  # the leaderboard's length control, from the same judge_fields
    assert results.groups["all"].value("versus")[OTHER_KEY]["wins"] == 4  # pooled over the shared tasks
    assert results.results["only_mine"].value("versus") is None  # a task OTHER does not have
    assert results.results["t"].value("win_rate") is None  # the baseline win rate is another matter
    block = results.config.versus[OTHER_KEY]
    assert block["spec"] == "openai:fake-model" and block["against"]["model"] == "hf:other-model"
    assert block["against"]["elicitation"]["method"] == "few-shot-dialogue"
    lines = run_folders.judgment_lines(run, "t", block)
    assert [x["id"] for x in lines] == [f"demo/{i}" for i in range(5)]
    assert {x["outcome"] for x in lines} == {"win", "loss"}
    versus(run, other, server)
    assert server.count() == 10  # every verdict came from the judgment cache
    report = render_report(run)
    assert "Head to head" in report and OTHER_KEY in report and "80.00" in report


def test_judge_command_against_another_run(tmp_path, fake_openai, capsys):
    run, other = two_runs(tmp_path)
    server = fake_openai(prefers_good)
    args = ["judge", str(run), "--judge", "openai:fake-model", "--base-url", server.base_url, "--no-progress"]
    assert main([*args, "--against", str(other)]) == 0
    out = capsys.readouterr().out
    assert f"t versus {OTHER_KEY}: win rate 0.8000" in out and "W/T/L 4/0/1, 5 judged of 5 shared" in out
    assert f"against {OTHER_KEY}" in out
    assert main([*args, "--against", str(run)]) == 2
    assert "a run cannot be judged against itself" in capsys.readouterr().err


def test_runs_sharing_nothing_are_one_line_and_exit_2(tmp_path, capsys):
    run = make_run(tmp_path / "run", "hf:a", {"t": [sample(0, "x", "y")]})
    no_task = make_run(tmp_path / "no_task", "hf:b", {"u": [sample(0, "x", "y")]})
    no_item = make_run(tmp_path / "no_item", "hf:b", {"t": [sample(1, "x", "y")]})
    args = ["judge", str(run), "--judge", "openai:fake-model", "--against"]
    for other, message in [
        (no_task, "share no task (t vs u)"),
        (no_item, "share no item of t"),
        (tmp_path / "missing", "no results file"),
    ]:
        assert main([*args, str(other)]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1


def test_two_opponents_of_one_model_never_mix_and_a_failed_pass_keeps_the_good_result(tmp_path, fake_openai):
    """--against OTHER1, then --against OTHER2 (the same model spec, fewer tasks): two entries, each with
    only its own verdicts; a later pass against OTHER1 that fails keeps OTHER1's verdicts."""
    mine = [sample(i, f"{GOOD} {i}", "rolegpt") for i in range(4)]
    run = make_run(tmp_path / "run", "hf:my-model", {"t": mine, "u": mine})
    one = make_run(
        tmp_path / "one", "hf:other", {"t": [sample(i, f"plain {i}", "x") for i in range(4)], "u": mine}
    )
    two = make_run(tmp_path / "two", "hf:other", {"t": [sample(i, f"{GOOD} two {i}", "x") for i in range(4)]})
    server = fake_openai(prefers_good)
    versus(run, one, server)
    results = versus(run, two, server)
    names = sorted(results.config.versus or {})
    assert len(names) == 2 and all(n.startswith("hf:other (zero-shot) #") for n in names)
    by_run = {block["against"]["run"]: name for name, block in (results.config.versus or {}).items()}
    against_one, against_two = by_run[str(one.resolve())], by_run[str(two.resolve())]
    t, u = results.results["t"].value("versus"), results.results["u"].value("versus")
    assert t[against_one]["wins"] == 4 and t[against_two]["ties"] == 4  # each opponent its own verdicts
    assert set(u) == {against_one}  # OTHER2 has no task u: nothing of OTHER1 is shown under its name
    group = results.groups["all"].value("versus")
    assert group[against_one]["judged"] == 8 and group[against_two]["judged"] == 4  # pooled per opponent
    broken = fake_openai(lambda body: "no verdict here")  # a judge at another server that answers nonsense
    again = rolebench.judge(
        run, "openai:fake-model", against=one, base_url=broken.base_url, progress=False, judge_args=FAST
    )
    t_again = again.results["t"].value("versus")[against_one]
    assert t_again["judged"] == 4 and t_again["wins"] == 4  # the good verdicts stay
    assert broken.count() > 0  # another endpoint is another judge: it was asked, not served from the cache


def test_evaluate_of_a_judged_run_keeps_every_judgment(tmp_path, fake_openai, capsys):
    """After `judge` and `judge --against`, a plain `evaluate` of the same run (same settings) keeps the
    win rate, the head-to-head results and how both were made (they are derived from the folder)."""
    server = fake_openai(prefers_good)
    base = ["evaluate", "--model", "baseline:rolegpt", "--tasks", "rolebench_demo", "--no-progress"]
    run, other = tmp_path / "run", tmp_path / "other"
    assert main([*base, "--output", str(run)]) == 0
    assert main([*base, "--output", str(other), "--elicitation", "few-shot-dialogue"]) == 0
    judge = [
        "judge",
        str(run),
        "--judge",
        "openai:fake-model",
        "--base-url",
        server.base_url,
        "--no-progress",
    ]
    assert main([*judge, "--judge-limit", "3"]) == 0 and main([*judge, "--against", str(other)]) == 0
    judged = read_results(run)
    assert main([*base, "--output", str(run)]) == 0
    again = read_results(run)
    for task in ("rolebench_demo_general", "rolebench_demo_specific"):
        for key in ("win_rate", "win_rate_ci", "judged", "versus"):
            assert again.results[task].value(key) == judged.results[task].value(key), (task, key)
    assert again.config.judge == judged.config.judge and again.config.versus == judged.config.versus
    assert again.groups["rolebench_demo"].value("versus") == judged.groups["rolebench_demo"].value("versus")


def test_an_opponent_whose_samples_lost_lines_is_refused(tmp_path, capsys):
    run, other = two_runs(tmp_path)
    path = other / "samples" / "t.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-2]))
    args = ["judge", str(run), "--judge", "openai:fake-model", "--against", str(other)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "the other run's samples file of t is not the one its results.json was computed from" in err
    assert str(path) in err and len(err.splitlines()) == 1
