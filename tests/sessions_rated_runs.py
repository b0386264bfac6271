"""Run folders holding sessions, for the leaderboard and compare tests: each plays RoleBench-style roles
with the engine's `play` and the scripted players of tests/sessions_scripted.py (a candidate, the shared
opponent, a judge whose plan decides how strong the candidate is), and writes its results.json as
`rolebench evaluate` does (`RunResults(sessions=..., config=RunConfig(sessions=...))`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from rolebench.results.schema import RunConfig, RunResults, SessionResult
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import SessionLog, session_over
from rolebench.scoring.session_stats import session_summary
from rolebench.sessions.loop import play
from rolebench.sessions.settings import Players, SessionSettings
from rolebench.storage.records import RecordStore
from rolebench.tasks.sessions import SESSION_TASKS
from tests.sessions_scripted import Plan, cached, candidate, header, judge, role_items

NAMES = ("Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal")


def strength_plan(wins: int, *, garbage_for: str = "") -> Plan:
    """The candidate wins turn `n` of a session when `(n + len(name)) % 4 < wins`, else loses (ties on
    round 2 of sessions starting with "B"); `garbage_for`: a role whose round 1 never parses."""

    def plan(name: str, number: int, attempt: int) -> str:
        if name == garbage_for and number == 1:
            return "garbage"
        if name.startswith("B") and number == 2:
            return "tie"
        return "candidate" if (number + len(name) + ord(name[0])) % 4 < wins else "opponent"

    return plan


def session_run(
    folder: Path,
    label: str,
    plan: Plan,
    *,
    task: str = "rolebench_eng_sessions",
    names: Sequence[str] = NAMES,
    turns: int = 3,
    seed: int = 7,
    opponent: str = "opp",
) -> Path:
    """A run folder with one task's sessions played and its results.json written; the folder."""
    run = RunFolder(folder)
    store = RecordStore(folder / "scripted-calls.sqlite")  # apart from a run's own store
    players = Players(
        cached(candidate(label), store), cached(candidate(opponent), store), cached(judge(plan), store)
    )
    settings = SessionSettings(turns=turns, seed=seed, judge_attempts=2)
    items = role_items(folder / "data", names)
    head = header(settings, players)
    log = SessionLog(run.session_log_path(task), head)
    play(items, players, settings, log)
    add_task(folder, task, head, len(items), turns, label, opponent)
    return folder


def add_task(
    folder: Path, task: str, head: dict, n_items: int, turns: int, label: str, opponent: str
) -> None:
    """Add the task's numbers (from its sessions file) and header to the run's results.json (a new one for a
    run of sessions only), keeping everything else it holds."""
    run = RunFolder(folder)
    path = run.session_log_path(task)
    log = SessionLog(path, head)
    summary = session_summary(log.records)
    complete = sum(session_over(t, turns) for t in log.sessions().values())
    result = SessionResult(
        kind=SESSION_TASKS[task].kind,
        language=SESSION_TASKS[task].language,
        n_items=n_items,
        n_complete=complete,
        log_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        **summary,
    )
    specs = {"candidate": f"scripted:{label}", "opponent": f"scripted:{opponent}", "judge": "scripted:judge"}
    previous = run.read_results() if run.results_path.is_file() else None
    if previous is None:  # a run of sessions only
        previous = RunResults(
            created="2026-11-27T06:00:00", config=RunConfig(model={"spec": f"scripted:{label}"}), results={}
        )
    configs = {**(previous.config.sessions or {}), task: {**head, "specs": specs}}
    config = previous.config.model_copy(update={"sessions": configs})
    run.write_results(
        previous.model_copy(update={"config": config, "sessions": {**previous.sessions, task: result}})
    )
