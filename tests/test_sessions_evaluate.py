"""`rolebench evaluate` on session tasks, end to end over HTTP: scripted candidate, opponent and judge
servers on 127.0.0.1 (tests/sessions_servers.py) give known transcripts, so the counts are exact.

The standard sessions (tests/sessions_scripted.py `standard_plan`, RoleBench-style roles Ann and Bob,
3 turns): Ann win, tie, loss; Bob loss (after one unreadable reply), win, then a turn the judge never
gets right (a failure, never a win). 12 answers (6 each side) and 11 judge replies (2 openings, 6 rounds,
one retry, two more attempts at the failed turn).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rolebench
from rolebench.cli.main import main
from rolebench.errors import ConfigError
from rolebench.run.session_log import read_log
from tests.fake_openai import FakeOpenAI
from tests.sessions_scripted import candidate
from tests.sessions_servers import evaluate_argv, judge_server, players_server, write_roles

REPO = Path(__file__).resolve().parents[1]
TASK = "rolebench_eng_sessions"
ANSWERS, JUDGE_CALLS = 12, 11


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI]]:
    players, judging = players_server(), judge_server()
    yield players, judging
    players.stop()
    judging.stop()


def _argv(servers: tuple[FakeOpenAI, FakeOpenAI], tmp_path: Path, *more: str) -> list[str]:
    return evaluate_argv(*servers, write_roles(tmp_path / "data"), tmp_path / "run", *more)


def _calls(servers: tuple[FakeOpenAI, FakeOpenAI]) -> tuple[int, int]:
    return servers[0].count(), servers[1].count()


def _sessions(run: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    found = json.loads((run / "results.json").read_text(encoding="utf-8"))
    return found["sessions"], found["config"]["sessions"]


def test_known_counts_through_the_command_line(servers, tmp_path, capsys):
    assert main(_argv(servers, tmp_path)) == 0
    assert _calls(servers) == (ANSWERS, JUDGE_CALLS)
    printed = capsys.readouterr().out
    assert TASK in printed and "2/1/2" in printed and "judged by openai:judge@" in printed
    sessions, config = _sessions(tmp_path / "run")
    result = sessions[TASK]
    assert (result["wins"], result["ties"], result["losses"], result["failures"]) == (2, 1, 2, 1)
    assert (result["n_items"], result["n_complete"], result["n_stalled"], result["n_turns"]) == (2, 2, 0, 6)
    assert result["win_rate"] == 0.5 and result["kind"] == "role" and result["language"] == "en"
    log = tmp_path / "run" / "sessions" / f"{TASK}.jsonl"
    assert result["log_sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    header = config[TASK]
    assert header["specs"]["opponent"].startswith("openai:opp@") and header["settings"]["turns"] == 3
    assert header["players"]["judge"]["spec"].startswith("openai:judge") and read_log(log)[0] == {
        k: v for k, v in header.items() if k != "specs"
    }
    assert header["data"]["files"] == {
        "profiles-eng/desc.json": hashlib.sha256(
            (tmp_path / "data/profiles-eng/desc.json").read_bytes()
        ).hexdigest()
    }
    # a rerun resumes: nothing is asked again, the same numbers
    assert main(_argv(servers, tmp_path)) == 0
    assert _calls(servers) == (ANSWERS, JUDGE_CALLS) and _sessions(tmp_path / "run")[0] == sessions


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"--opponent": None}, "need --opponent"),
        ({"--judge": None}, "need --judge"),
        ({"--opponent": "nonsense:x"}, "--opponent"),
        ({"--turns": "0"}, "--turns"),
    ],
)
def test_a_bad_session_setting_is_one_line_before_any_call(servers, tmp_path, capsys, change, expected):
    argv = _argv(servers, tmp_path)
    for flag, value in change.items():
        at = argv.index(flag)
        argv[at + 1 : at + 2] = [value] if value is not None else []
        if value is None:
            del argv[at]
    assert main(argv) == 2
    assert expected in _error(capsys)
    assert _calls(servers) == (0, 0) and not (tmp_path / "run").exists()


def test_other_players_or_turns_are_refused_naming_them_and_overwrite_plays_again(servers, tmp_path, capsys):
    assert main(_argv(servers, tmp_path)) == 0
    capsys.readouterr()
    assert main(_argv(servers, tmp_path, "--turns", "2")) == 2
    assert "--turns 3 there, 2 now" in _error(capsys)
    other_judge = judge_server()
    try:
        argv = _argv(servers, tmp_path)
        argv[argv.index("--judge") + 1] = f"openai:judge@{other_judge.base_url}"
        assert main(argv) == 2
        assert "--judge" in _error(capsys) and _calls(servers) == (ANSWERS, JUDGE_CALLS)
        assert other_judge.count() == 0  # refused before any call
        assert main([*argv, "--overwrite"]) == 0
        assert other_judge.count() == JUDGE_CALLS and _calls(servers) == (
            ANSWERS,
            JUDGE_CALLS,
        )  # answers stored
    finally:
        other_judge.stop()
    assert _sessions(tmp_path / "run")[0][TASK]["wins"] == 2


def test_a_failed_call_stalls_sessions_exit_1_and_the_next_run_goes_on(servers, tmp_path, capsys):
    players, _ = servers
    handler = players.handler
    players.handler = lambda body: 500 if body["model"] == "opp" else handler(body)
    argv = _argv(servers, tmp_path, "--opponent-args", "max_retries=0,backoff=0")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "sessions not over (rolebench_eng_sessions 2 of 2: a model call failed): run the same" in err
    # and which call failed, and how
    assert f"rolebench: {TASK}: 2 sessions wait on a failed call (first, role/en/Ann: " in err
    assert "HTTP 500" in err
    assert _sessions(tmp_path / "run")[0][TASK]["n_stalled"] == 2
    players.handler = handler
    assert main(argv) == 0
    assert _sessions(tmp_path / "run")[0][TASK]["wins"] == 2


def test_a_judge_never_read_as_verdicts_is_a_failure_not_a_number(servers, tmp_path, capsys):
    """A judge that cannot answer in the protocol's JSON (a small model, a wrong judge file) measures
    nothing: every session ends at its first round as a failure, the task is flagged, and the command
    says so and exits 1 (a few failures among verdicts are counted apart and do not fail the run)."""
    never = judge_server(lambda name, number, attempt: "garbage")
    try:
        argv = _argv(servers, tmp_path)
        argv[argv.index("--judge") + 1] = f"openai:judge@{never.base_url}"
        assert main(argv) == 1
        assert f"no verdict in {TASK}: the judge's replies could not be read as verdicts" in _error(capsys)
    finally:
        never.stop()
    result = _sessions(tmp_path / "run")[0][TASK]
    assert (result["wins"], result["ties"], result["losses"], result["failures"]) == (0, 0, 0, 2)
    assert result["win_rate"] is None and result["flags"] == ["judge_failures"]


def test_a_mixed_run_scores_single_turn_tasks_and_plays_sessions(servers, tmp_path):
    argv = _argv(servers, tmp_path)
    argv[argv.index("--tasks") + 1] = f"rolebench_demo_general,{TASK}"
    assert main(argv) == 0
    found = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert set(found["results"]) == {"rolebench_demo_general"} and set(found["sessions"]) == {TASK}
    assert found["results"]["rolebench_demo_general"]["win_rate"] is not None  # judged against RoleGPT too
    assert found["sessions"][TASK]["wins"] == 2
    assert set(json.loads((tmp_path / "run" / "run.json").read_text())["config"]["sessions"]) == {TASK}


def test_the_python_api_with_a_model_object(servers, tmp_path):
    players, judging = servers
    options: dict[str, Any] = dict(
        opponent=f"openai:opp@{players.base_url}",
        turns=3,
        seed=7,
        data_dir=write_roles(tmp_path / "data"),
        output=tmp_path / "run",
        progress=False,
    )
    with pytest.raises(ConfigError, match="need judge="):
        rolebench.evaluate(candidate("cand"), TASK, **options)
    results = rolebench.evaluate(candidate("cand"), TASK, judge=f"openai:judge@{judging.base_url}", **options)
    result = results.sessions[TASK]
    assert (result.wins, result.ties, result.losses, result.failures) == (2, 1, 2, 1)
    assert results.config.sessions is not None and results.config.sessions[TASK]["specs"]["candidate"] == (
        "scripted:cand"
    )
    assert _calls(servers) == (ANSWERS // 2, JUDGE_CALLS)  # the candidate answered in memory


def test_a_limit_takes_a_stable_seeded_subset(servers, tmp_path):
    roles = {name: f"{name}, a test role." for name in ("Ann", "Bob", "Cy", "Dee", "Eve")}
    argv = _argv(servers, tmp_path, "--limit", "2")
    argv[argv.index("--data-dir") + 1] = str(write_roles(tmp_path / "data", roles))
    assert main(argv) == 0
    first = set(json.loads((tmp_path / "run" / "run.json").read_text())["config"]["sessions"][TASK]["items"])
    argv[argv.index("--limit") + 1] = "4"
    assert main(argv) == 0
    grown = json.loads((tmp_path / "run" / "run.json").read_text())["config"]["sessions"][TASK]["items"]
    assert len(first) == 2 and len(grown) == 4 and first <= set(grown)
    assert _sessions(tmp_path / "run")[0][TASK]["n_items"] == 4


def _evaluate_killed(argv: list[str], servers: tuple[FakeOpenAI, FakeOpenAI], kill_at: int) -> None:
    """`rolebench evaluate` in a child process, killed (SIGKILL) by the servers at their `kill_at`-th call."""
    child: dict[str, subprocess.Popen[bytes]] = {}
    seen = {"n": 0}

    def on_call(body: dict[str, Any]) -> None:
        seen["n"] += 1
        if seen["n"] == kill_at:
            os.kill(child["process"].pid, signal.SIGKILL)

    handlers = [server.handler for server in servers]
    for server, handler in zip(servers, handlers, strict=True):
        server.handler = lambda body, handler=handler: (on_call(body), handler(body))[1]
    try:
        environment = {**os.environ, "PYTHONPATH": str(REPO)}
        child["process"] = subprocess.Popen(
            [sys.executable, "-m", "rolebench.cli", *argv, "--concurrency", "1"],
            cwd=REPO,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert child["process"].wait(timeout=60) == -signal.SIGKILL
    finally:
        for server, handler in zip(servers, handlers, strict=True):
            server.handler = handler


@pytest.mark.parametrize("kill_at", [1, 7, 13, 18, ANSWERS + JUDGE_CALLS])
def test_a_run_killed_at_any_call_resumes_to_the_same_sessions(servers, tmp_path, kill_at):
    assert main(_argv(servers, tmp_path)) == 0
    expected = _sessions(tmp_path / "run")
    for server in servers:
        server.reset()
    argv = _argv(servers, tmp_path)  # the same data, another run folder
    argv[argv.index("--output") + 1] = str(tmp_path / "killed")
    _evaluate_killed(argv, servers, kill_at)
    for server in servers:
        server.reset()
    assert main(argv) == 0
    assert _sessions(tmp_path / "killed") == expected  # the same turns, the same file, the same numbers
    # the calls answered before the kill were stored: only the rest is asked again, and at most the answers
    # of the round in flight that had come back but were not yet stored when the process died (both sides'
    # batches, one answer per session each, are asked at once): 2 sessions x 2 sides, less the killing call
    rest = ANSWERS + JUDGE_CALLS - (kill_at - 1)
    assert rest <= sum(_calls(servers)) <= rest + 3


def test_a_second_judges_verdicts_join_the_results_with_their_agreement(servers, tmp_path):
    from rolebench.run.folder import RunFolder
    from rolebench.run.session_log import SessionLog
    from rolebench.sessions.data import load_roles
    from rolebench.sessions.rejudge import rejudge
    from rolebench.sessions.settings import SessionSettings
    from rolebench.storage.records import RecordStore
    from tests.sessions_scripted import cached, judge

    assert main(_argv(servers, tmp_path)) == 0
    folder = RunFolder(tmp_path / "run")
    played = folder.session_log_path(TASK)
    header, _ = read_log(played)
    assert header is not None
    second = cached(judge(lambda name, number, attempt: "candidate"), RecordStore(tmp_path / "j.sqlite"))
    log = SessionLog(folder.session_log_path(TASK, judge="second"), {"rejudged": TASK})
    items = load_roles(tmp_path / "data", "en")
    rejudge(items, SessionLog(played, header), second, SessionSettings(turns=3, seed=7), log)
    before = _sessions(tmp_path / "run")[0][TASK]
    results = rolebench.score(tmp_path / "run")  # results.json derived again from the folder's files
    found = results.sessions[TASK]
    assert found.judges["second"]["wins"] == 6 and found.judges["second"]["win_rate"] == 1.0
    # the first judge: Ann win, tie, loss; Bob loss, win (its third round failed); the second: win throughout
    agreement = found.judges["second"]["agreement"]
    assert agreement["n"] == 5 and agreement["agreement"] == pytest.approx(2 / 5) and agreement["kappa"] == 0
    assert found.model_dump(exclude={"judges"}) == {k: v for k, v in before.items() if k != "judges"}


@pytest.mark.slow
def test_the_embedded_smollm2_plays_sessions_through_evaluate(servers, tmp_path, rolebench_data):
    """A real small run: `rolebench evaluate --model smollm2:135m` (llama.cpp) as the candidate, on two
    RoleBench roles for two turns, against the scripted opponent and judge; a rerun asks nothing."""
    pytest.importorskip("llama_cpp")
    players, judging = servers
    argv = _argv(servers, tmp_path, "--limit", "2", "--max-new-tokens", "32")
    argv[argv.index("--model") + 1] = "smollm2:135m"
    argv[argv.index("--turns") + 1] = "2"
    argv[argv.index("--data-dir") + 1] = str(rolebench_data)
    assert main(argv) == 0
    result = _sessions(tmp_path / "run")[0][TASK]
    assert (result["n_items"], result["n_complete"], result["n_turns"]) == (2, 2, 4)
    assert result["wins"] + result["losses"] + result["ties"] + result["failures"] == 4
    log = read_log(tmp_path / "run" / "sessions" / f"{TASK}.jsonl")[1]
    answers = [r["answers"]["candidate"] for r in log if r["turn"] > 0]
    assert all(isinstance(a, str) and a.strip() and not a.startswith("<") for a in answers)
    calls = _calls(servers)
    assert main(argv) == 0 and _calls(servers) == calls  # every turn kept: nothing asked again


def test_a_session_run_whose_files_were_removed_says_so(servers, tmp_path, capsys):
    assert main(_argv(servers, tmp_path)) == 0
    shutil.rmtree(tmp_path / "run" / "sessions")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run")]) == 2
    assert f"or the sessions files of {TASK} were removed" in _error(capsys)
