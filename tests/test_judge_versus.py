"""`rolebench judge RUN --against OTHER`: two runs head to head, with the real `openai:` adapter talking
to the local fake OpenAI-compatible server (its verdicts prefer the answer marked GOOD)."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rolebench.cli.main import main
from rolebench.judge.run import JudgeSettings
from rolebench.judge.versus import judge_versus
from rolebench.report.page import render_report
from rolebench.results.io import read_results, write_results, write_samples
from rolebench.results.provenance import now_iso
from rolebench.results.schema import GroupResult, RunResults, SampleRecord, TaskResult
from tests.fake_openai import fake_openai  # noqa: F401 - `fake_openai` is a fixture
from tests.test_judge import FAST, GOOD, prefers_good, sample

OTHER_KEY = "hf:other-model (few-shot-dialogue, 3 shots)"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLEBENCH_CACHE", str(tmp_path / "cache"))


def make_run(folder: Path, spec: str, tasks: dict[str, list[dict[str, Any]]], **config: Any) -> Path:
    """A run folder as `rolebench evaluate` writes it: results.json (tasks, one group) and samples."""
    results = {
        t: TaskResult(split="demo_general", n=len(r), n_generated=len(r), n_not_covered=0)
        for t, r in tasks.items()
    }
    write_results(
        folder,
        RunResults(
            created=now_iso(),
            results=results,
            groups={"all": GroupResult(tasks=list(tasks), n=sum(len(r) for r in tasks.values()))},
            config={
                "model": {"spec": spec},
                "bootstrap": {"resamples": 200, "confidence": 0.95, "seed": 0},
                **config,
            },
        ),
    )
    for task, records in tasks.items():
        write_samples(folder, task, [SampleRecord.model_validate(r) for r in records])
    return folder


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """RUN is better on items 0-3 and worse on 4; 5 and 6 are one run's only; 7 asks another question."""
    mine = [sample(i, f"{GOOD} {i}" if i < 4 else f"meh {i}", "rolegpt") for i in (0, 1, 2, 3, 4, 6, 7)]
    theirs = [sample(i, f"{GOOD} theirs {i}" if i == 4 else f"plain {i}", "rolegpt") for i in range(6)]
    theirs.append({**sample(7, "plain 7", "rolegpt"), "question": "Another question?"})
    elicitation = {"method": "few-shot-dialogue", "shots": 3, "label": "few-shot-dialogue, 3 shots"}
    run = make_run(tmp_path / "run", "hf:my-model", {"t": mine, "only_mine": mine[:2]})
    other = make_run(tmp_path / "other", "hf:other-model", {"t": theirs}, elicitation=elicitation)
    return run, other


def versus(run: Path, other: Path, server: Any) -> dict[str, Any]:
    settings = JudgeSettings(base_url=server.base_url, progress=False, model_options=FAST, concurrency=4)
    return judge_versus(run, other, "openai:fake-model", settings=settings)


def test_run_against_run_on_shared_items_both_orders_cached(tmp_path, fake_openai):
    run, other = two_runs(tmp_path)
    server = fake_openai(prefers_good)
    report = versus(run, other, server)
    assert report["key"] == OTHER_KEY
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
    slug = "hf_other-model_few-shot-dialogue_3_shots"
    lines = [
        json.loads(x) for x in (run / "judgments" / "versus" / slug / "t.jsonl").read_text().splitlines()
    ]
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
