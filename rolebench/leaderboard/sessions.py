"""The leaderboard's boards of sessions: runs of one session task (or group of tasks) played the same way,
with ratings across their models.

A **session board** is one task (`rpbench_character`, ...) or group (`rpbench`: every task of it) and one
way of playing it: everything in the sessions' header but the candidate (the opponent's and the judge's
identities, the turns, seed, judge attempts and decodings, the templates, the data). Runs played another
way are on another board, which says what differs. A row is one run: its win rate against the opponent
with its interval (ties and failures apart), its position bias (its win rate as model_a and as model_b),
and its **rating**: Bradley-Terry by maximum likelihood on the Elo scale over every decided turn of every
run of the board, the opponent a player too (`rolebench.scoring.ratings`), with a bootstrap over the
items (each drawn item brings every run's session on it: the runs compared on the same draw, as the
single-turn boards rank theirs) that gives each rating its interval and each player its rank interval
(1,000 resamples, seed 0; a resample without finite ratings is skipped and counted). The turns are read
from each run's sessions file (`sessions/<task>.jsonl`), or, in a built leaderboard folder, from
`session_turns.json` beside the copy of its results.json (who was placed where and who won: no text).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rolebench.leaderboard.boards import find_results
from rolebench.leaderboard.rows import display_name, shown_name
from rolebench.leaderboard.session_turns import (
    Turns,
    comparison_key,
    differences,
    player,
    read_located,
    read_turns,
    session_header,
)
from rolebench.results.schema import RunResults
from rolebench.run.layout import SESSIONS_DIR
from rolebench.scoring.ratings import matches_by_session, ratings_with_intervals
from rolebench.scoring.session_stats import session_summary
from rolebench.tasks.sessions import SESSION_GROUPS, SESSION_TASKS

OPPONENT = "\x00opponent"  # the opponent's player name in the ratings (no run is named so)
RESAMPLES = 1000  # bootstrap resamples of the ratings (seed 0)


@dataclass
class SessionRow:
    """One run on a session board, or the opponent (`source` "opponent": rated, no win rate of its own)."""

    run: str
    model: str
    spec: str
    source: str = "ours"
    date: str = ""
    win_rate: float | None = None
    win_rate_ci: list[float] | None = None
    wins: int = 0
    losses: int = 0
    ties: int = 0
    failures: int = 0
    n_items: int = 0
    n_sessions: int = 0
    n_complete: int = 0
    as_model_a: float | None = None
    as_model_b: float | None = None
    rating: float | None = None
    rating_ci: list[float] | None = None
    rank: int | None = None
    rank_interval: list[int] | None = None
    matches: int = 0
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class SessionBoard:
    """The runs of one task or group played one way (see the module docstring)."""

    id: str
    task: str
    label: str
    opponent: str
    judge: str
    turns: int | None
    digest: str
    rows: list[SessionRow]
    note: str = ""  # why it ranks nothing, or what its ratings could not use
    ratings: dict[str, Any] = field(default_factory=dict)  # n_matches, resamples, undefined_resamples

    def heading(self) -> str:
        turns = f"{self.turns} turns" if self.turns else "turns unknown"
        return f"{self.label} · against {self.opponent} · judged by {self.judge} · {turns} · {self.digest}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "heading": self.heading()}


@dataclass
class _Entry:
    """One run's part of a board: its header key, its numbers, its turns (None: not found)."""

    run: str
    results: RunResults
    headers: dict[str, Mapping[str, Any]]
    turns: dict[str, Turns | None]


def _digest(keys: Sequence[Mapping[str, Any]]) -> str:
    text = json.dumps([dict(k) for k in keys], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _pooled(entry: _Entry, tasks: Sequence[str]) -> Turns | None:
    """The run's turns of every task, items named `task/item` (None when a task's are missing)."""
    pooled: Turns = []
    for task in tasks:
        turns = entry.turns.get(task)
        if turns is None:
            return None
        pooled += [{**t, "item": f"{task}/{t['item']}"} for t in turns]
    return pooled


def _row(entry: _Entry, tasks: Sequence[str], names: Mapping[str, str]) -> SessionRow:
    """The run's numbers on the tasks: results.json's for one task, else its turns' (or counts summed)."""
    results = entry.results
    specs = entry.headers[tasks[0]].get("specs") or {}
    spec = str(specs.get("candidate") or (results.config.model or {}).get("spec") or entry.run)
    row = SessionRow(entry.run, display_name(spec, entry.run, names), shown_name(spec))
    row.date = results.created[:10]
    parts = [results.sessions[t] for t in tasks]
    row.n_items, row.n_sessions = sum(p.n_items for p in parts), sum(p.n_sessions for p in parts)
    row.n_complete = sum(p.n_complete for p in parts)
    row.flags = sorted({f for p in parts for f in p.flags})
    pooled = _pooled(entry, tasks) if len(tasks) > 1 else None
    numbers: Mapping[str, Any] = (
        session_summary(pooled) if pooled is not None else parts[0].model_dump() if len(parts) == 1 else {}
    )
    for key in ("wins", "losses", "ties", "failures"):
        setattr(row, key, int(numbers.get(key, sum(getattr(p, key) for p in parts))))
    decided = row.wins + row.losses
    row.win_rate = numbers.get("win_rate", row.wins / decided if decided else None)
    row.win_rate_ci = list(numbers["win_rate_ci"]) if numbers.get("win_rate_ci") else None
    position = numbers.get("position") or {}
    row.as_model_a = (position.get("candidate_as_model_a") or {}).get("win_rate")
    row.as_model_b = (position.get("candidate_as_model_b") or {}).get("win_rate")
    if row.n_complete < row.n_items:
        row.notes.append(f"{row.n_items - row.n_complete} of {row.n_items} sessions not complete")
    return row


def _rate(board: SessionBoard, entries: Sequence[_Entry], tasks: Sequence[str]) -> None:
    """Set the board's ratings and ranks (see the module docstring), or its note saying why it has none."""
    ours = [r for r in board.rows if r.source == "ours"]
    if len(ours) < 2:
        board.note = "ranks nothing: one run played this way (a win rate against the opponent stands alone)"
        return
    missing = [e.run for e in entries if _pooled(e, tasks) is None]
    if missing:
        board.note = (
            f"no ratings: the turns of {missing[0]} are not found ({SESSIONS_DIR}/<task>.jsonl), or are not "
            "those its numbers came from"
        )
        return
    sessions, items = [], []
    for entry in entries:
        turns = _pooled(entry, tasks) or []
        for item, matches in matches_by_session(
            turns, {"candidate": entry.run, "opponent": OPPONENT}
        ).items():
            sessions.append(matches)
            items.append(item)
    found = ratings_with_intervals(sessions, resamples=RESAMPLES, seed=0, items=items)
    board.ratings = {k: v for k, v in found.items() if k != "ratings"}
    if found["ratings"] is None:
        board.note = f"no ratings: {found['why']}"
        return
    for row in board.rows:
        rated = found["ratings"].get(OPPONENT if row.source == "opponent" else row.run)
        if rated:
            row.rating, row.rank, row.matches = rated["rating"], rated["rank"], rated["matches"]
            row.rating_ci = list(rated["rating_ci"]) if rated["rating_ci"] else None
            low_high = rated["rank_ci"]
            row.rank_interval = [round(low_high[0]), round(low_high[1])] if low_high else None


def _opponent_row(header: Mapping[str, Any], names: Mapping[str, str]) -> SessionRow:
    spec = player(header, "opponent")
    return SessionRow("", display_name(spec, "", names), shown_name(spec), source="opponent")


def _units() -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, label, tasks) of every task, then every group."""
    units = [(name, task.label, (name,)) for name, task in SESSION_TASKS.items()]
    return units + [(name, f"{name} (all its tasks)", tasks) for name, tasks in SESSION_GROUPS.items()]


def session_boards(
    runs: Sequence[tuple[RunResults, str]], names: Mapping[str, str] | None = None
) -> list[SessionBoard]:
    """The session boards of the runs (see the module docstring), ordered by task, then by size."""
    names = names or {}
    entries = [
        _Entry(
            name,
            run,
            {t: session_header(run, t) for t in run.sessions},
            {t: read_turns(run, t) for t in run.sessions},
        )
        for run, name in runs
        if run.sessions
    ]
    boards: list[SessionBoard] = []
    for unit, label, tasks in _units():
        groups: dict[str, tuple[list[dict[str, Any]], list[_Entry]]] = {}
        for entry in entries:
            if all(t in entry.headers for t in tasks):
                keys = [comparison_key(entry.headers[t]) for t in tasks]
                groups.setdefault(_digest(keys), (keys, []))[1].append(entry)
        built = [
            _board(unit, label, tasks, digest, keys, held, names) for digest, (keys, held) in groups.items()
        ]
        built.sort(key=lambda b: (-len(b.rows), b.id))
        for board in built:
            _say_what_differs(board, built, groups)
        boards += built
    return boards


def collect_sessions(
    paths: Iterable[str | Path], names: Mapping[str, str] | None = None
) -> list[SessionBoard]:
    """Read every results.json under `paths` and build the session boards of those holding sessions."""
    return session_boards([(read_located(path), name) for path, name in find_results(paths)], names)


def _board(
    unit: str,
    label: str,
    tasks: Sequence[str],
    digest: str,
    keys: Sequence[Mapping[str, Any]],
    entries: Sequence[_Entry],
    names: Mapping[str, str],
) -> SessionBoard:
    header = entries[0].headers[tasks[0]]
    rows = [_row(e, tasks, names) for e in entries]
    turns = (header.get("settings") or {}).get("turns")
    board = SessionBoard(
        f"sessions-{unit}-{digest}",
        unit,
        label,
        _opponent_row(header, names).model,
        display_name(player(header, "judge"), "", names),
        turns if isinstance(turns, int) else None,
        digest,
        [*rows, _opponent_row(header, names)],
    )
    _rate(board, entries, tasks)
    board.rows.sort(
        key=lambda r: (r.rank is None, r.rank or 0, r.source != "ours", -(r.win_rate or 0.0), r.model.lower())
    )
    return board


def _say_what_differs(
    board: SessionBoard,
    built: Sequence[SessionBoard],
    groups: Mapping[str, tuple[list[dict[str, Any]], list[_Entry]]],
) -> None:
    """A board beside others of the same task names what sets it apart from the largest one."""
    if board is built[0]:
        return
    own, largest = groups[board.digest][0], groups[built[0].digest][0]
    fields = sorted({f for a, b in zip(own, largest, strict=True) for f in differences(a, b)})
    apart = f"not comparable with the runs of {built[0].id}: {', '.join(fields)} differ"
    board.note = f"{board.note}; {apart}" if board.note else apart
