"""Run folders holding played sessions, for the report, judge and floor tests: a finished run (one
single-turn task) whose folder also holds a session task's log, played by the engine with the scripted
players of `tests.sessions_scripted`, and its numbers written into results.json as the run's derivation
writes them (`SessionResult`, `RunConfig.sessions`).

The standard sessions: roles Ann, Bob and Cy, 3 turns, `standard_plan` (Ann: win, tie, loss; Bob: loss,
win, then a failure; Cy as Bob, but its candidate's server goes down at turn 2: stalled). The opponent's
answers carry HTML and a bidi override (a hostile answer the report must show as text).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from model_adapters import Generation, GenerationConfig, Request
from rolebench.results.schema import SessionResult
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import SessionLog, session_over
from rolebench.scoring.session_stats import session_summary
from rolebench.sessions.loop import play
from rolebench.sessions.settings import Players, SessionSettings
from tests import run_folders
from tests.sessions_scripted import Scripted, cached, candidate, header, judge, role_items, standard_plan

TASK = "rolebench_eng_sessions"
SETTINGS = SessionSettings(turns=3, seed=7, judge_attempts=2)
HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script> \u202eevil'


class Flaky(Scripted):
    """A scripted candidate whose server is down for `down`'s sessions from their `from_turn`-th turn."""

    def __init__(self, base: Scripted, down: str, from_turn: int) -> None:
        super().__init__(base.spec.partition(":")[2], base.reply)
        self.down, self.from_turn = down, from_turn

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        for request in requests:
            users = sum(m["role"] == "user" for m in request.messages)
            if self.down in request.messages[0]["content"] and users >= self.from_turn:
                yield request, Generation(text=None, error="server down")
            else:
                yield from super().generate([request], config)


def hostile_opponent() -> Scripted:
    def reply(request: Request) -> str:
        users = [m["content"] for m in request.messages if m["role"] == "user"]
        return f"<opp> {len(users)}: {users[-1]} {HOSTILE}"

    return Scripted("opp", reply)


def sample(i: int) -> dict[str, Any]:
    return {
        "id": f"demo/{i}",
        "index": i,
        "role": "Captain Mira Vance",
        "question": f"Question {i}?",
        "description": "A captain.",
        "language": "en",
        "output": f"answer {i}",
        "scores": {},
        "messages": [],
        "references": ["a reference"],
    }


def players_of(folder: Path, opponent: Scripted | None = None, cand: Scripted | None = None) -> Players:
    """The standard players, their calls kept in the run folder's generation store."""
    store = RunFolder(folder).generation_store()
    return Players(
        cached(cand or Flaky(candidate("cand"), "Cy", 2), store),
        cached(opponent or hostile_opponent(), store),
        cached(judge(standard_plan), store),
    )


def play_into(folder: Path, players: Players, names: Sequence[str] = ("Ann", "Bob", "Cy")) -> SessionLog:
    items = role_items(folder.parent / f"{folder.name}-data", names)
    log = SessionLog(RunFolder(folder).session_log_path(TASK), header(SETTINGS, players))
    play(items, players, SETTINGS, log)
    return log


def write_numbers(folder: Path, log: SessionLog, n_items: int) -> None:
    """results.json's fields of the task, from its log (as the run's derivation writes them)."""
    run = RunFolder(folder)
    results = run.read_results()
    sessions = log.sessions()
    over = sum(session_over(turns, SETTINGS.turns) for turns in sessions.values())
    results.sessions[TASK] = SessionResult(
        kind="role",
        language="en",
        n_items=n_items,
        n_complete=over,
        n_stalled=len(sessions) - over,
        **session_summary(log.records),
    )
    specs = {role: log.header["players"][role]["spec"] for role in ("candidate", "opponent", "judge")}
    results.config.sessions = {TASK: {**log.header, "specs": specs}}
    run.write_results(results)


def session_run(folder: Path, players_for: Any = None) -> Path:
    """A finished run with the standard sessions played into it and results.json holding their numbers."""
    run_folders.make_run(folder, "baseline:rolegpt", {"t": [sample(i) for i in range(3)]})
    players = players_for(folder) if players_for else players_of(folder)
    try:
        log = play_into(folder, players)
    finally:
        for model in (players.candidate, players.opponent, players.judge):
            model.close()
    write_numbers(folder, log, 3)
    return folder
