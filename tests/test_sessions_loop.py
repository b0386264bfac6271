"""Sessions with scripted players: known transcripts, retries, failures, nothing asked twice, resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from model_adapters import Generation, GenerationConfig
from rolebench.errors import ConfigError
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import SessionLog, read_log
from rolebench.scoring.session_stats import judge_agreement
from rolebench.sessions.loop import play
from rolebench.sessions.rejudge import rejudge
from rolebench.sessions.settings import Players, SessionSettings, placement
from rolebench.storage.records import RecordStore
from tests.sessions_scripted import (
    CALLS,
    Scripted,
    cached,
    candidate,
    header,
    judge,
    role_items,
    standard_plan,
    standard_run,
)

REPO = Path(__file__).resolve().parents[1]
STANDARD_CALLS = (
    22  # 12 answers (2 sessions x 3 turns x 2 candidates) + 10 judge replies (2 openings, 8 rounds)
)


def _adapters(players: Players) -> list[Scripted]:
    return [model.adapter() for model in (players.candidate, players.opponent, players.judge)]  # type: ignore[misc]


def test_known_transcripts(tmp_path: Path) -> None:
    log, players = standard_run(tmp_path)
    sessions = log.sessions()
    ann, bob = sessions["role/en/Ann"], sessions["role/en/Bob"]
    assert [t["winner"] for t in ann[1:]] == ["candidate", "tie", "opponent"]
    assert [t["winner"] for t in bob[1:]] == ["opponent", "candidate", None]
    assert bob[3]["failure"] == "no JSON object in the reply" and bob[3]["verdict"] is None
    assert [len(t["judge"]) for t in bob] == [1, 2, 1, 2]  # a retry that parsed, and a failure after 2
    assert ann[0]["next_user"] == "hi Ann" and ann[1]["user"] == "hi Ann" and ann[2]["user"] == "user 2"
    assert ann[1]["kept"] == ann[1]["answers"]["candidate"] == "<cand> 1: hi Ann"
    tie = ann[2]
    assert tie["kept"] == tie["answers"][tie["placement"]["model_a"]]  # a tie goes on with model_a's answer
    assert ann[3]["user"] == "user 3" and ann[3]["answers"]["opponent"] == "<opp> 3: user 3"
    last = [r for r in _adapters(players)[0].requests if "Ann" in r.messages[0]["content"]][-1]
    history = [m["content"] for m in last.messages]
    assert history[1] == "Hello." and history[3] == ann[1]["kept"] and history[5] == tie["kept"]
    assert sum(len(a.requests) for a in _adapters(players)) == STANDARD_CALLS


def test_nothing_is_asked_twice(tmp_path: Path) -> None:
    first, _ = standard_run(tmp_path)
    again, players = standard_run(tmp_path)  # the same log: every session is over
    assert again.records == first.records and not any(a.requests for a in _adapters(players))
    os.remove(RunFolder(tmp_path).session_log_path("roles"))  # a fresh log, the same store: all cached
    fresh, players = standard_run(tmp_path)
    assert fresh.records == first.records and not any(a.requests for a in _adapters(players))


def test_placement_is_drawn_per_item_and_turn() -> None:
    draws = [placement(0, f"role/en/{n}", t)["model_a"] for n in range(200) for t in range(1, 6)]
    assert 0.4 < draws.count("candidate") / len(draws) < 0.6
    assert placement(3, "x", 2) == placement(3, "x", 2)
    assert {placement(s, "x", 1)["model_a"] for s in range(20)} == {"candidate", "opponent"}


def test_each_judge_attempt_has_its_own_seed(tmp_path: Path) -> None:
    _, players = standard_run(tmp_path)
    requests = _adapters(players)[2].requests
    retried = [r for r in requests if [m["content"][:8] for m in r.messages].count("Round 1 ") == 1]
    retried = [r for r in retried if not any(m["content"].startswith("Round 2") for m in r.messages)]
    bob = [r for r in retried if "Bob" in r.messages[0]["content"]]
    assert (
        len(bob) == 2 and bob[0].seed != bob[1].seed and "could not be read" in bob[1].messages[-1]["content"]
    )


def test_a_failed_call_stalls_the_session_until_a_rerun(tmp_path: Path) -> None:
    store = RecordStore(tmp_path / "store.sqlite")
    down = Scripted("cand", lambda request: "")
    down.generate = lambda requests, config: (
        (r, Generation(text=None, error="server down")) for r in requests
    )  # type: ignore[method-assign]
    items = role_items(tmp_path / "data", ["Ann"])
    settings = SessionSettings(turns=2)
    log = SessionLog(tmp_path / "s.jsonl", {"s": 1})
    played = play(
        items,
        Players(cached(down, store), cached(candidate("opp"), store), cached(judge(standard_plan), store)),
        settings,
        log,
    )
    assert played.stalled == {"role/en/Ann": "server down"} and [r["turn"] for r in log.records] == [0]
    players = Players(
        cached(candidate("cand"), store), cached(candidate("opp"), store), cached(judge(standard_plan), store)
    )
    again = play(items, players, settings, SessionLog(tmp_path / "s.jsonl", {"s": 1}))
    assert again.turns == 2 and not again.stalled
    assert len(_adapters(players)[2].requests) == 2  # the opening came from the store


def test_other_settings_are_refused_and_a_torn_line_is_dropped(tmp_path: Path) -> None:
    first, players = standard_run(tmp_path)
    path = RunFolder(tmp_path).session_log_path("roles")
    with pytest.raises(ConfigError, match="played with other settings \\(settings differ\\)"):
        SessionLog(path, header(SessionSettings(turns=4), players))
    changed = [replace(item, greeting="Hi.") for item in role_items(tmp_path / "data", ["Ann"])]
    settings = SessionSettings(turns=3, seed=7, judge_attempts=2)
    with pytest.raises(ConfigError, match="session on role/en/Ann was played on another version of the item"):
        play(changed, players, settings, SessionLog(path, header(settings, players)))
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"item": "role/en/Ann", "tu')
    kept = json.loads(whole.splitlines()[0])["header"]
    reopened = SessionLog(path, kept)
    assert reopened.records == first.records and path.read_bytes().endswith(b'"tu')  # reading never writes
    reopened.append({"item": "role/en/Cy", "turn": 0, "failure": None})
    assert path.read_bytes().startswith(whole) and len(read_log(path)[1]) == len(first.records) + 1


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="turns 0 is not allowed"):
        SessionSettings(turns=0)
    batched = SessionSettings(answer_config=GenerationConfig(batch_size=2)).header()
    assert batched == SessionSettings().header()  # batching decides nothing


def _records(run_dir: Path) -> list[dict]:
    lines = RunFolder(run_dir).session_log_path("roles").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_run_killed_at_any_call_resumes_to_the_same_sessions(tmp_path: Path) -> None:
    whole, _ = standard_run(tmp_path / "whole")
    expected = _records(tmp_path / "whole")
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    for kill_at in range(1, STANDARD_CALLS + 1):
        run_dir = tmp_path / f"killed-{kill_at}"
        child = subprocess.run(
            [sys.executable, "-m", "tests.sessions_scripted", str(run_dir), str(kill_at)],
            cwd=REPO,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        assert child.returncode == -9, child.stderr
        CALLS["n"] = 0
        _, players = standard_run(run_dir)
        assert _records(run_dir) == expected, kill_at
        # every call answered before the kill was stored: only the rest is asked again
        assert sum(len(a.requests) for a in _adapters(players)) == STANDARD_CALLS - (kill_at - 1), kill_at


def test_a_second_judge_on_the_same_turns(tmp_path: Path) -> None:
    first, players = standard_run(tmp_path)
    second = judge(lambda name, number, attempt: "candidate", label="judge-2")
    model = cached(second, players.judge.store)
    settings = SessionSettings(turns=3, seed=7, judge_attempts=2)
    items = role_items(tmp_path / "data", ["Ann", "Bob"])
    log = SessionLog(tmp_path / "rejudged.jsonl", {"rejudged": "roles"})
    done = rejudge(items, first, model, settings, log)
    assert done.turns == 6 and done.failures == 0 and len(second.requests) == 6  # one batch, no retry
    ann_2 = next(
        r
        for r in second.requests
        if "Ann" in r.messages[0]["content"] and "Round 2" in r.messages[-1]["content"]
    )
    earlier = json.loads(ann_2.messages[4]["content"])  # round 1 as it was played, without its reason
    ann_1 = first.sessions()["role/en/Ann"][1]
    assert earlier == {
        "winner": "model_b" if ann_1["placement"]["model_b"] == "candidate" else "model_a",
        "next_round_user_speaks": "user 2",
    }
    assert [r["winner"] for r in log.records] == ["candidate"] * 6
    found = judge_agreement(first.records, log.records)
    # the first judge: Ann win, tie, loss; Bob loss, win (its third round failed); the second: win throughout
    assert (
        found["n"] == 5
        and found["agreement"] == pytest.approx(2 / 5)
        and found["kappa"] == pytest.approx(0.0)
    )
    assert (
        rejudge(
            items, first, model, settings, SessionLog(tmp_path / "rejudged.jsonl", {"rejudged": "roles"})
        ).turns
        == 0
    )
