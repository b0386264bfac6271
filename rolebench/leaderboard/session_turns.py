"""What a run holds of its sessions, for the leaderboard and `rolebench compare`: each task's header (who
played, how: results.json's `config.sessions`, else its sessions file's), what must agree for two runs to
be compared (`comparison_key`), and each task's turns (placements and winners, no text), read from the
run's sessions file or, in a built leaderboard folder, from `session_turns.json` beside its results.json.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rolebench.errors import DataError
from rolebench.results.schema import RunResults
from rolebench.run.folder import RunFolder, read_results
from rolebench.run.session_log import read_log
from rolebench.storage.files import write_text_atomic
from rolebench.storage.jsonl import read_json

SESSION_TURNS_FILE = "session_turns.json"  # OUT/results/<run>/: each task's turns, no text
Turns = list[dict[str, Any]]


def session_header(results: RunResults, task: str) -> Mapping[str, Any]:
    recorded = (results.config.sessions or {}).get(task)
    if isinstance(recorded, Mapping):
        return recorded
    folder = results.folder
    found = read_log(RunFolder(folder).session_log_path(task))[0] if folder else None
    return found or {}


def comparison_key(header: Mapping[str, Any]) -> dict[str, Any]:
    """What must agree for two runs' sessions of a task to be compared: the header but the candidate (its
    identity and the specs as given), flattened one level (`players.opponent`, `settings`, ...)."""
    flat: dict[str, Any] = {}
    for key, value in header.items():
        if key == "specs":
            continue
        if key == "players" and isinstance(value, Mapping):
            flat.update({f"players.{k}": v for k, v in value.items() if k != "candidate"})
        else:
            flat[key] = value
    return flat


def differences(first: Mapping[str, Any], second: Mapping[str, Any]) -> list[str]:
    """The fields of two comparison keys that differ, one level down where both are tables
    (`players.opponent`, `settings.turns`, `data.roles`)."""
    found = []
    for key in sorted(set(first) | set(second)):
        a, b = first.get(key), second.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            found += [f"{key}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        else:
            found.append(key)
    return found


def read_turns(results: RunResults, task: str) -> Turns | None:
    """A task's judged turns (item, turn, placement, winner, failure) from the run's sessions file, else
    from `session_turns.json` beside its results.json; None when neither holds them or they are not the
    turns its numbers were computed from (the sessions file's sha256 differs from the recorded one)."""
    folder = results.folder
    if folder is None:
        return None
    recorded = results.sessions[task].log_sha256 if task in results.sessions else None
    log = RunFolder(folder).session_log_path(task)
    if log.is_file():
        if recorded and hashlib.sha256(log.read_bytes()).hexdigest() != recorded:
            return None
        return [_kept(r) for r in read_log(log)[1]]
    kept = folder / SESSION_TURNS_FILE
    if not kept.is_file():
        return None
    document = read_json(kept)
    block = document.get(task) if isinstance(document, Mapping) else None
    if not isinstance(block, Mapping) or (recorded and block.get("log_sha256") != recorded):
        return None
    return _checked(block.get("turns"), f"{kept} ({task})")


_SIDES = ("candidate", "opponent")


def _turn_ok(turn: Any) -> bool:
    if not isinstance(turn, Mapping) or not isinstance(turn.get("item"), str | int):
        return False
    placement, number = turn.get("placement"), turn.get("turn")
    placed = placement is None or (
        isinstance(placement, Mapping) and sorted(placement.values()) == list(_SIDES) and len(placement) == 2
    )
    return (
        isinstance(number, int)
        and placed
        and turn.get("winner") in (*_SIDES, "tie", None)
        and (turn.get("winner") in (None, "tie") or placement is not None)
    )


def _checked(turns: Any, where: str) -> Turns:
    """`session_turns.json`'s turns of one task, refused in one line where one is not a turn."""
    if not isinstance(turns, list):
        bad: int | None = 0
    else:
        bad = next((n for n, t in enumerate(turns, 1) if not _turn_ok(t)), None)
    if bad is not None:
        raise DataError(
            f"not a list of session turns (turn {bad} is not item, turn, placement, winner)"
            if bad
            else "no list of session turns",
            where=where,
            fix="build the leaderboard again from the run folders (`rolebench leaderboard build RUNS...`)",
        )
    return [dict(t) for t in turns]


def _kept(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the ratings and numbers need of one turn record: no text."""
    failure = None if record.get("failure") is None else "failure"
    keys = ("item", "turn", "placement", "winner")
    return {**{k: record.get(k) for k in keys}, "failure": failure}


def turns_document(results: RunResults) -> dict[str, Any]:
    """`session_turns.json` of a run: per task, the turns (no text) and the sha256 of their sessions file."""
    found: dict[str, Any] = {}
    for task, result in sorted(results.sessions.items()):
        turns = read_turns(results, task)
        if turns is not None:
            found[task] = {"log_sha256": result.log_sha256, "turns": turns}
    return found


def read_located(path: Path) -> RunResults:
    """A results.json, located in its folder even when that is no run folder (a built leaderboard's copy):
    its session turns are read from beside it."""
    results = read_results(path)
    return results if results.folder else results.located(path.parent if path.is_file() else path)


def write_session_turns(folder: Path, source: Path) -> Path | None:
    """`folder/session_turns.json` (atomically) when the results.json `source` has session turns (from
    its run folder's sessions files); its path, else None."""
    document = turns_document(read_located(source))
    if not document:
        return None
    write_text_atomic(folder / SESSION_TURNS_FILE, json.dumps(document, ensure_ascii=False) + "\n")
    return folder / SESSION_TURNS_FILE


def player(header: Mapping[str, Any], role: str) -> str:
    specs, players = header.get("specs") or {}, header.get("players") or {}
    found = players.get(role)
    identity: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return str(specs.get(role) or identity.get("spec") or identity.get("name") or "unknown")
