"""Scripted players for session tests: candidates and a judge that answer known texts, no model.

A candidate answers `<label> <k>: <the user's last line>` (k: the user lines so far). The judge opens
with `hi <name>` and decides each round by `plan(name, round, attempt)`: "candidate", "opponent", "tie",
or "garbage" (a reply that does not parse); it finds which reply is whose from the `<label>` tags.

`python -m tests.sessions_scripted RUN_DIR KILL_AT` plays the standard sessions into RUN_DIR and kills
itself (SIGKILL) just before the KILL_AT-th model call (0: never), for the resume tests.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from model_adapters import Generation, GenerationConfig, Request
from rolebench.cached_model import CachedModel
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import SessionLog
from rolebench.sessions.data import SessionItem, load_roles
from rolebench.sessions.loop import play
from rolebench.sessions.settings import Players, SessionSettings, session_header
from rolebench.storage.records import RecordStore

# RPBench-Auto's release: $RPBENCH_DATA, else beside the RoleBench copy ($ROLEBENCH_DATA/../rpbench)
RPBENCH = Path(
    os.environ.get("RPBENCH_DATA")
    or Path(
        os.environ.get("ROLEBENCH_DATA", Path(__file__).resolve().parents[2] / "shared" / "rolebench")
    ).parent
    / "rpbench"
)
Plan = Callable[[str, int, int], str]
CALLS = {"n": 0, "kill_at": 0}


class Scripted:
    """The adapter protocol (`model_adapters.interface.ModelAdapter`) with a scripted `reply`."""

    def __init__(self, label: str, reply: Callable[[Request], str]) -> None:
        self.spec = f"scripted:{label}"
        self.reply = reply
        self.requests: list[Request] = []

    def info(self) -> dict[str, Any]:
        return {"name": self.spec, "revision": None}

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        for request in requests:
            CALLS["n"] += 1
            if CALLS["n"] == CALLS["kill_at"]:
                os.kill(os.getpid(), signal.SIGKILL)
            self.requests.append(request)
            yield request, Generation(text=self.reply(request))

    def close(self) -> None:
        return None


def candidate(label: str) -> Scripted:
    def reply(request: Request) -> str:
        users = [m["content"] for m in request.messages if m["role"] == "user"]
        return f"<{label}> {len(users)}: {users[-1]}"

    return Scripted(label, reply)


def judge(plan: Plan, tags: tuple[str, str] = ("cand", "opp"), label: str = "judge") -> Scripted:
    def reply(request: Request) -> str:
        messages = request.messages
        name = re.search(r"chatting with the character (.+?), and", messages[0]["content"])
        assert name is not None
        attempt = sum("could not be read" in m["content"] for m in messages if m["role"] == "user")
        rounds = [m["content"] for m in messages if m["role"] == "user" and m["content"].startswith("Round ")]
        if not rounds:
            return json.dumps({"next_round_user_speaks": f"hi {name.group(1)}"})
        shown = rounds[-1]
        number = int(shown.split()[1])
        decision = plan(name.group(1), number, attempt)
        if decision == "garbage":
            return "I cannot decide."
        texts = dict(re.findall(r"\[(model_[ab])\]\n(.*?)\n\[end of", shown, re.DOTALL))
        # the opponent's replies carry its tag; the candidate's may not (a real model)
        swap = {"model_a": "model_b", "model_b": "model_a"}
        opponent = [label for label, text in texts.items() if text.startswith(f"<{tags[1]}>")]
        if not opponent:  # an untagged opponent (a baseline): the reply that is not the tagged candidate's
            opponent = [swap[label] for label, text in texts.items() if text.startswith(f"<{tags[0]}>")]
        other = swap[opponent[0]]
        winner = "tie" if decision == "tie" else opponent[0] if decision == "opponent" else other
        reason = f"round {number}: {decision}"
        return json.dumps(
            {"winner": winner, "next_round_user_speaks": f"user {number + 1}", "decision_reason": reason}
        )

    return Scripted(label, reply)


def cached(adapter: Scripted, store: RecordStore) -> CachedModel:
    return CachedModel.given(adapter, {"spec": adapter.spec}, store)


def role_items(folder: Path, names: Sequence[str]) -> list[SessionItem]:
    """RoleBench-style roles (a `profiles-eng/desc.json` written under `folder`)."""
    (folder / "profiles-eng").mkdir(parents=True, exist_ok=True)
    table = {name: f'{name}, a test role. Your catchphrase is: "{name}!"' for name in names}
    (folder / "profiles-eng" / "desc.json").write_text(json.dumps(table), encoding="utf-8")
    return load_roles(folder, "en")


def standard_plan(name: str, number: int, attempt: int) -> str:
    """Ann: candidate, tie, opponent. Bob: garbage once then opponent, candidate, garbage for good."""
    if name == "Ann":
        return ("candidate", "tie", "opponent")[number - 1]
    if number == 1:
        return "garbage" if attempt == 0 else "opponent"
    return "candidate" if number == 2 else "garbage"


def header(settings: SessionSettings, players: Players) -> dict[str, Any]:
    return session_header(players, settings, {"roles": "scripted"})


def standard_run(run_dir: Path) -> tuple[SessionLog, Players]:
    """Ann and Bob, 3 turns, the standard plan, everything kept under `run_dir`."""
    store = RecordStore(run_dir / "generations.sqlite")
    players = Players(
        cached(candidate("cand"), store), cached(candidate("opp"), store), cached(judge(standard_plan), store)
    )
    settings = SessionSettings(turns=3, seed=7, judge_attempts=2)
    items = role_items(run_dir / "data", ["Ann", "Bob"])
    log = SessionLog(RunFolder(run_dir).session_log_path("roles"), header(settings, players))
    play(items, players, settings, log)
    return log, players


if __name__ == "__main__":
    CALLS["kill_at"] = int(sys.argv[2])
    standard_run(Path(sys.argv[1]))
