"""Two runs' sessions side by side (`rolebench compare A B` on session tasks): paired over the sessions
(items) both played, task by task and per group of tasks.

The unit is the session: its **win share** is the candidate's wins over the turns decided either way in
that session (ties and failures left out, as RPBench-Auto's win rate). A's and B's numbers are the means of
their win shares over the sessions where both decided a turn; A - B has a paired bootstrap interval (the
sessions drawn with replacement, jointly for A and B) and a paired permutation p-value (A's and B's shares
of a session swapped at random: `rolebench.scoring.permutation`), and the verdict reads both, as the
single-turn comparison does. A group (`rpbench`) pools its tasks' sessions. Beside them each run's win rate
as results.json gives it (over all its turns). Runs that played a task differently (another opponent,
judge, turns, data, templates: `rolebench.leaderboard.session_turns.comparison_key`) are refused, naming
what differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
from tabulate import tabulate

from rolebench.errors import DataError
from rolebench.leaderboard.session_turns import (
    Turns,
    comparison_key,
    differences,
    player,
    read_turns,
    session_header,
)
from rolebench.results.schema import RunResults
from rolebench.scoring.permutation import paired_differences
from rolebench.scoring.resampling import Layout, Resampling
from rolebench.tasks.sessions import SESSION_GROUPS

WIN_SHARE = "win_share"


def shared_session_tasks(a: RunResults, b: RunResults, where: str) -> list[str]:
    """The session tasks both runs hold, after checking both played each the same way."""
    tasks = [t for t in a.sessions if t in b.sessions]
    for task in tasks:
        differ = differences(comparison_key(session_header(a, task)), comparison_key(session_header(b, task)))
        if differ:
            raise DataError(
                f"the runs played {task} differently: {', '.join(differ)} differ",
                where=where,
                fix="compare runs played against one opponent and judge, with the same settings and data",
            )
    return tasks


def win_shares(turns: Turns) -> dict[str, float]:
    """Each session's win share (sessions with no turn decided either way left out)."""
    counts: dict[str, list[int]] = {}
    for turn in turns:
        if int(turn["turn"]) > 0 and turn.get("winner") in ("candidate", "opponent"):
            row = counts.setdefault(str(turn["item"]), [0, 0])
            row[0] += turn["winner"] == "candidate"
            row[1] += 1
    return {item: wins / decided for item, (wins, decided) in counts.items()}


def _turns(results: RunResults, task: str, side: str, where: str) -> Turns:
    turns = read_turns(results, task)
    if turns is None:
        raise DataError(
            f"the turns of {side}'s {task} are not found, or its sessions file is not the one its numbers "
            "came from",
            where=where,
            fix=f"keep the run folder's sessions/{task}.jsonl (or rebuild results.json from it)",
        )
    return turns


def compare_sessions(
    a: RunResults, b: RunResults, tasks: Sequence[str], settings: Resampling, where: str
) -> dict[str, Any]:
    """The sessions part of the comparison document (see the module docstring)."""
    arrays = {}
    for task in tasks:
        shares_a = win_shares(_turns(a, task, "A", where))
        shares_b = win_shares(_turns(b, task, "B", where))
        items = [item for item in shares_a if item in shares_b]
        if items:
            column_a = np.array([[shares_a[i]] for i in items])
            column_b = np.array([[shares_b[i]] for i in items])
            arrays[task] = (column_a, column_b, (WIN_SHARE,))
    if not arrays:
        raise DataError(
            f"the runs share no session with a decided turn (tasks {', '.join(tasks)})",
            where=where,
            fix="compare runs of the same items (the same --limit and seed, or every item)",
        )
    groups = {g: list(m) for g, m in SESSION_GROUPS.items() if all(t in arrays for t in m)}
    found = paired_differences(arrays, Layout(groups, frozenset({WIN_SHARE})), settings)
    header = session_header(a, tasks[0])
    return {
        "opponent": player(header, "opponent"),
        "judge": player(header, "judge"),
        "turns": (header.get("settings") or {}).get("turns"),
        "tasks": {t: _entry(found[t][WIN_SHARE], a, b, [t]) for t in arrays},
        "groups": {g: {"tasks": m, **_entry(found[g][WIN_SHARE], a, b, m)} for g, m in groups.items()},
    }


def _entry(found: Any, a: RunResults, b: RunResults, tasks: Sequence[str]) -> dict[str, Any]:
    def rate(results: RunResults) -> float | None:
        wins = sum(results.sessions[t].wins for t in tasks)
        decided = wins + sum(results.sessions[t].losses for t in tasks)
        return wins / decided if decided else None

    return {WIN_SHARE: asdict(found), "win_rate_a": rate(a), "win_rate_b": rate(b)}


def _percent(value: float | None, signed: bool = False) -> str:
    return "-" if value is None else f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"


def sessions_table(document: Mapping[str, Any], p_text: Any) -> str:
    """The sessions part on a terminal: per task and group, A's and B's win rates (results.json's), their
    mean win shares on the sessions both played, A - B, its interval, p, n and the verdict."""
    sessions = document["sessions"]
    boot = document["bootstrap"]
    rows = []
    entries = [*sessions["tasks"].items(), *((f"[group] {g}", e) for g, e in sessions["groups"].items())]
    for name, entry in entries:
        share = entry[WIN_SHARE]
        ci = share["ci"]
        rows.append(
            [
                name,
                f"{_percent(entry['win_rate_a'])} / {_percent(entry['win_rate_b'])}",
                _percent(share["a"]),
                _percent(share["b"]),
                _percent(share["diff"], signed=True),
                "-" if not ci else f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]",
                p_text(share, int(boot["resamples"])),
                f"{share['n']:,}",
                share.get("verdict") or "-",
            ]
        )
    headers = ["session task", "win % A / B", "A", "B", "A - B", f"{boot['confidence']:.0%} interval", "p"]
    table = tabulate(
        rows, headers=[*headers, "sessions", "verdict"], tablefmt="github", disable_numparse=True
    )
    return "\n".join(
        [
            table,
            "",
            f"Sessions against {sessions['opponent']}, judged by {sessions['judge']}, "
            f"{sessions['turns']} turns. Win % A / B: each run's win rate over all its decided turns "
            "(results.json). A, B: the mean per-session win share (%) over the sessions both runs played "
            "with a decided turn (n); A - B with a paired bootstrap interval over sessions and a paired "
            "permutation p-value.",
        ]
    )
