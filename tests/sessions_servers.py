"""Scripted session players over HTTP: OpenAI-compatible servers on 127.0.0.1 that answer as the
scripted candidates and judge of `tests.sessions_scripted` do, for tests of `rolebench evaluate` itself.

`players_server()` answers as a candidate named by the request's model (`openai:cand@URL` answers
`<cand> k: <the user's last line>`, `openai:opp@URL` as `<opp> ...`); `judge_server(plan)` opens with
`hi <name>` and decides each round by `plan(name, round, attempt)` (see `tests.sessions_scripted`). Each
counts its calls (`FakeOpenAI.count`); `on_call`, when set, sees every call first (e.g. to kill the
process that made it).

`python -m tests.sessions_servers FILE` starts both and writes their base URLs to FILE as JSON, then
serves until killed (for a run in another process).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_adapters import Request
from tests.fake_openai import FakeOpenAI, Reply
from tests.sessions_scripted import Plan, candidate, judge, standard_plan

SINGLE_TURN_RANKS = json.dumps(
    [{"model": "model_a", "reason": "first", "rank": 1}, {"model": "model_b", "reason": "second", "rank": 2}]
)
SINGLE_TURN_RANKS = json.dumps(
    [{"model": "model_a", "reason": "first", "rank": 1}, {"model": "model_b", "reason": "second", "rank": 2}]
)
ROLES = {"Ann": "Ann, a test role.", "Bob": "Bob, a test role."}


def _request(body: dict[str, Any]) -> Request:
    return Request(id="call", messages=body["messages"])


def players_server(on_call: Callable[[dict[str, Any]], None] | None = None) -> FakeOpenAI:
    """Candidates `cand` and `opp` (and any other name: its own tag) behind one server."""

    def handler(body: dict[str, Any]) -> Reply | str:
        if on_call is not None:
            on_call(body)
        return candidate(str(body["model"])).reply(_request(body))

    return FakeOpenAI(handler, models=None).start()


def judge_server(
    plan: Plan = standard_plan, on_call: Callable[[dict[str, Any]], None] | None = None
) -> FakeOpenAI:
    """The scripted judge: the user's lines and each round's verdict by `plan`; asked to rank two answers
    of a single-turn task (not a session), it ranks the first shown first."""
    scripted = judge(plan)

    def handler(body: dict[str, Any]) -> Reply | str:
        if on_call is not None:
            on_call(body)
        if "chatting with the character" not in str(body["messages"][0]["content"]):
            return SINGLE_TURN_RANKS
        return scripted.reply(_request(body))

    return FakeOpenAI(handler, models=None).start()


def write_roles(folder: Path, roles: dict[str, str] = ROLES) -> Path:
    """A RoleBench folder holding only the English role descriptions (what `rolebench_eng_sessions` reads)."""
    (folder / "profiles-eng").mkdir(parents=True, exist_ok=True)
    (folder / "profiles-eng" / "desc.json").write_text(json.dumps(roles), encoding="utf-8")
    return folder


def evaluate_argv(
    players: FakeOpenAI, judging: FakeOpenAI, data: Path, run: Path, *more: str, model: str = "cand"
) -> list[str]:
    """`rolebench evaluate` of `rolebench_eng_sessions` with these servers' players (3 turns, seed 7)."""
    return [
        "evaluate",
        "--model",
        f"openai:{model}@{players.base_url}",
        "--tasks",
        "rolebench_eng_sessions",
        "--opponent",
        f"openai:opp@{players.base_url}",
        "--judge",
        f"openai:judge@{judging.base_url}",
        "--turns",
        "3",
        "--seed",
        "7",
        "--data-dir",
        str(data),
        "--output",
        str(run),
        "--no-progress",
        *more,
    ]


if __name__ == "__main__":
    servers = players_server(), judge_server()
    Path(sys.argv[1]).write_text(json.dumps([s.base_url for s in servers]), encoding="utf-8")
    while True:
        time.sleep(60)
