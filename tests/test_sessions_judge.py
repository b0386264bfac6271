"""`rolebench judge RUN --judge OTHER` on a run with sessions: a second judge's verdicts on the same turns,
through the real `openai:` adapter and the local fake OpenAI-compatible server, whose verdicts a scripted
plan decides (known disagreements with the judge that played the sessions: agreement and kappa known)."""
# ruff: noqa: F811 - the imported `fake_openai` fixture is used as an argument, the pytest way

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_adapters import Request
from rolebench.cached_model import CachedModel
from rolebench.cli.main import main
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import read_log
from rolebench.scoring.session_stats import judge_agreement
from rolebench.sessions.settings import Players
from tests.fake_openai import fake_openai  # noqa: F401 - `fake_openai` is a fixture
from tests.sessions_runs import TASK, players_of, session_run
from tests.sessions_scripted import judge, standard_plan

FAST = "backoff=0,max_retries=0"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own judgment cache; RoleBench's roles read from the folder the sessions played on."""
    monkeypatch.setenv("ROLEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ROLEBENCH_DATA", str(tmp_path / "run-data"))


def second_plan(name: str, number: int, attempt: int) -> str:
    """The candidate throughout, but Ann's third round: the opponent."""
    return "opponent" if (name, number) == ("Ann", 3) else "candidate"


def handler(plan: Any, down: str | None = None) -> Any:
    """The scripted judge behind the fake server (`down`: a role whose requests get a 500)."""
    scripted = judge(plan)

    def handle(body: dict[str, Any]) -> str | int:
        if down is not None and f"character {down}," in body["messages"][0]["content"]:
            return 500
        return scripted.reply(Request(id="x", messages=body["messages"]))

    return handle


def judge_logs(run: Path) -> list[Path]:
    return sorted((run / "sessions" / "judges").glob(f"*/{TASK}.jsonl"))


def run_judge(run: Path, server: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    spec = f"openai:fake-model@{server.base_url}"
    code = main(["judge", str(run), "--judge", spec, "--judge-args", FAST, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_second_judge_on_every_played_turn(tmp_path: Path, fake_openai: Any, capsys: Any) -> None:
    run = session_run(tmp_path / "run")
    server = fake_openai(handler(second_plan))
    code, out, _ = run_judge(run, server, capsys)
    assert code == 0, out
    (log,) = judge_logs(run)
    name = log.parent.name
    assert name.startswith("openai_fake-model_http_127.0.0.1_") and len(name.split("-")[-1]) == 8
    assert f"{TASK}: judge {name}: 7 turns judged in this pass (0 failures), 7 kept" in out
    assert server.count() == 7  # every round of Ann (3), Bob (3, its failed one too) and Cy (1), no retry
    header, second = read_log(log)
    assert header is not None and header["judge"]["spec"] == "openai:fake-model"
    _, first = read_log(RunFolder(run).session_log_path(TASK))
    played = {(r["item"], r["turn"]): r for r in first}
    assert all(r["answers"] == played[(r["item"], r["turn"])]["answers"] for r in second)  # the same turns
    assert all(r["placement"] == played[(r["item"], r["turn"])]["placement"] for r in second)
    by_turn = {(r["item"], r["turn"]): r["winner"] for r in second}
    assert by_turn[("role/en/Ann", 3)] == "opponent" and by_turn[("role/en/Bob", 3)] == "candidate"
    # first judge: Ann W T L, Bob L W (then a failure), Cy L; second: W W L, W W W, W
    found = judge_agreement(first, second)
    assert found["n"] == 6 and found["agreement"] == pytest.approx(3 / 6)
    assert found["kappa"] == pytest.approx(5 / 23)  # chance (2*5 + 3*1) / 36 = 13/36
    assert found["confusion"] == {"loss/loss": 1, "loss/win": 2, "tie/win": 1, "win/win": 2}
    again, out, _ = run_judge(run, server, capsys)
    assert again == 0 and "0 turns judged in this pass (0 failures), 7 kept" in out
    assert server.count() == 7  # nothing asked twice


def test_a_pass_that_failed_calls_exits_1_and_the_next_resumes(
    tmp_path: Path, fake_openai: Any, capsys: Any
) -> None:
    run = session_run(tmp_path / "run")
    server = fake_openai(handler(second_plan, down="Bob"))
    code, out, err = run_judge(run, server, capsys)
    assert code == 1 and "3 session turns have no verdict of the second judge yet" in err
    assert "4 turns judged in this pass (0 failures), 4 kept" in out and "1 sessions not judged" in out
    asked = server.count()
    server.handler = handler(second_plan)
    code, out, _ = run_judge(run, server, capsys)
    assert code == 0 and "3 turns judged in this pass (0 failures), 7 kept" in out
    assert server.count() == asked + 3  # only Bob's rounds asked again
    (log,) = judge_logs(run)
    assert len(read_log(log)[1]) == 7


def test_the_judge_that_played_the_sessions_is_not_asked_again(
    tmp_path: Path, fake_openai: Any, capsys: Any
) -> None:
    server = fake_openai(handler(standard_plan))
    spec = f"openai:fake-model@{server.base_url}"

    def players(folder: Path) -> Players:
        scripted = players_of(folder)
        return Players(scripted.candidate, scripted.opponent, CachedModel(spec, {}, scripted.judge.store))

    run = session_run(tmp_path / "run", players)
    played = server.count()
    code, out, _ = run_judge(run, server, capsys)
    assert code == 0 and f"{TASK}: {spec} played these sessions as their judge" in out
    assert server.count() == played and not judge_logs(run)


def test_a_changed_role_is_refused_in_one_line(tmp_path: Path, fake_openai: Any, capsys: Any) -> None:
    run = session_run(tmp_path / "run")
    table = tmp_path / "run-data" / "profiles-eng" / "desc.json"
    roles = json.loads(table.read_text(encoding="utf-8"))
    table.write_text(json.dumps({**roles, "Ann": "Someone else."}), encoding="utf-8")
    code, _, err = run_judge(run, fake_openai(handler(second_plan)), capsys)
    assert code == 2 and "the session on role/en/Ann was played on another version of the item" in err
    assert len(err.strip().splitlines()) <= 3
