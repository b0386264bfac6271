"""Every turn of every session kept as it arrives: one JSON Lines file per task, appended line by line.

The file's first line is its header (`{"header": {...}}`: who played, who judged, the turns, the seed, the
data and templates: everything that decides what the sessions are); each later line is one turn of one
session (`turn` 0 is the judge's opening user line). A line is written with one `write` of its whole
bytes to a file opened for appending, then flushed to disk, so a killed run leaves at most its last line
torn; a torn last line is ignored on reading (`read_log` never writes) and cut off before the next
append. A run that finds the file resumes each session at the turn it reached; a header that differs is
refused, naming what differs (another setting would make other sessions).

A session is over after its last turn, or at a failure (a judge reply that did not parse within the
attempts allowed: recorded, and the conversation cannot go on without the judge's next user line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigError, DataError
from rolebench.run.folder import RunFolder
from rolebench.run.layout import SESSION_JUDGES_DIR, SESSIONS_DIR


def logged_tasks(folder: RunFolder) -> list[str]:
    """The tasks whose sessions file the run folder holds (`RunFolder.session_log_path`)."""
    where = folder.path / SESSIONS_DIR
    return sorted(p.stem for p in where.glob("*.jsonl")) if where.is_dir() else []


def judge_logs(folder: RunFolder, task: str) -> dict[str, Path]:
    """A session task's second judges' verdict files, by judge name (`session_log_path(task, judge=...)`)."""
    played = folder.session_log_path(task)
    return {p.parent.name: p for p in sorted((played.parent / SESSION_JUDGES_DIR).glob(f"*/{played.name}"))}


CORRUPT_FIX = (
    "restore the file from a copy, or remove it (or pass --overwrite to rolebench evaluate): its sessions "
    "are played again, the calls already made answered from the run's generation store"
)
_SIDES = ("candidate", "opponent")


def _corrupt(problem: str, where: str) -> DataError:
    return DataError(f"a sessions file was edited or damaged: {problem}", where=where, fix=CORRUPT_FIX)


def _round_problem(record: dict[str, Any], played: bool) -> str | None:
    """What is wrong with a judged turn's fields (None: nothing); `played`: a turn of a played file."""
    placed = record.get("placement")
    if not isinstance(placed, dict) or sorted(placed) != ["model_a", "model_b"]:
        return "its `placement` is not {model_a, model_b}"
    if sorted(placed.values()) != list(_SIDES):
        return "its `placement` does not place the candidate and the opponent"
    answers = record.get("answers")
    if (answers is not None or not played) and not (
        isinstance(answers, dict) and all(isinstance(answers.get(side), str) for side in _SIDES)
    ):
        return "its `answers` are not the candidate's and the opponent's texts"
    if record.get("winner") not in (*_SIDES, "tie", None):
        return f"its `winner` {record.get('winner')!r} is not candidate, opponent, tie or null"
    if (record.get("winner") is None) != (record.get("failure") is not None):
        return "it has a winner and a failure, or neither"
    return None


def _record_problem(record: Any, played: bool) -> str | None:
    """What is wrong with one turn record of a sessions file (None: nothing)."""
    if not isinstance(record, dict):
        return "the line is not a JSON object"
    turn = record.get("turn")
    if not isinstance(record.get("item"), str) or isinstance(turn, bool) or not isinstance(turn, int):
        return "the line has no text `item` and whole-number `turn`"
    if turn < 0:
        return f"turn {turn} is negative"
    judge = record.get("judge", [])
    if not isinstance(judge, list) or not all(isinstance(text, str) for text in judge):
        return "its `judge` is not the list of the judge's replies"
    for name in ("failure", "next_user", "user", "kept"):
        if record.get(name) is not None and not isinstance(record.get(name), str):
            return f"its `{name}` is neither null nor a text"
    return None if turn == 0 else _round_problem(record, played)


def _check_sessions(path: Path, header: dict[str, Any], records: list[tuple[int, dict[str, Any]]]) -> None:
    """Each (item, turn) once; in a played file (its header names the players) each session's turns run
    0, 1, 2, ... up to the header's turns."""
    played = "players" in header
    last = (header.get("settings") or {}).get("turns")
    seen: dict[str, list[dict[str, Any]]] = {}
    for number, record in records:
        where = f"{path}:{number}"
        turns = seen.setdefault(record["item"], [])
        if any(kept["turn"] == record["turn"] for kept in turns):
            raise _corrupt(f"turn {record['turn']} of {record['item']} is kept twice", where)
        if played and isinstance(last, int) and record["turn"] > last:
            raise _corrupt(
                f"turn {record['turn']} of {record['item']} is past the {last} turns played", where
            )
        if played and record["turn"] != len(turns):
            raise _corrupt(
                f"{record['item']} goes on at turn {record['turn']} after {len(turns)} turns", where
            )
        turns.append(record)


def _parsed(path: Path, number: int, line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise _corrupt("a line is not UTF-8 text", f"{path}:{number}") from None
    except (ValueError, RecursionError):
        raise _corrupt("a line is not JSON", f"{path}:{number}") from None


def read_log(path: str | Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A sessions file's header and turn records, read only (a torn last line is left out; None and no
    records when the file is not there or empty). A line that is not a turn record, a turn kept twice,
    or (in a played file) a session whose turns skip one: a DataError naming the line."""
    path = Path(path)
    if not path.is_file():
        return None, []
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]  # a line torn by a kill: nothing was promised of it
    lines = [_parsed(path, n, line) for n, line in enumerate(whole.splitlines(), 1)]
    if not lines:
        return None, []
    first = lines[0]
    if not isinstance(first, dict) or not isinstance(first.get("header"), dict):
        raise DataError(
            "not a sessions file: its first line is not a header",
            where=f"{path}:1",
            fix="remove the file (its sessions are played again) or point at another run folder",
        )
    for number, line in enumerate(lines[1:], 2):
        problem = _record_problem(line, "players" in first["header"])
        if problem:
            raise _corrupt(problem, f"{path}:{number}")
    _check_sessions(path, first["header"], list(enumerate(lines[1:], 2)))
    return first["header"], lines[1:]


class SessionLog:
    """One task's sessions file, open to play into (see the module docstring)."""

    def __init__(self, path: str | Path, header: Mapping[str, Any]) -> None:
        """Open (or start) the file; `header` must equal the one a started file holds."""
        self.path = Path(path)
        self.header = json.loads(json.dumps(dict(header)))  # as it reads back
        stored, self._records = read_log(self.path)
        if stored is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(b"")
            self._append({"header": self.header})
        elif stored != self.header:
            differ = sorted(k for k in set(stored) | set(self.header) if stored.get(k) != self.header.get(k))
            raise ConfigError(
                f"these sessions were played with other settings ({', '.join(differ)} differ)",
                where=str(self.path),
                fix="use the same settings to resume them, or another run folder for new sessions",
            )

    def _append(self, record: Mapping[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        descriptor = os.open(self.path, os.O_RDWR | os.O_APPEND)
        try:
            size = os.fstat(descriptor).st_size
            if size and os.pread(descriptor, 1, size - 1) != b"\n":  # a torn last line: cut off first
                os.ftruncate(descriptor, os.pread(descriptor, size, 0).rfind(b"\n") + 1)
            os.write(descriptor, line)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def append(self, record: Mapping[str, Any]) -> None:
        """Keep one turn (written through to disk before this returns)."""
        self._append(record)
        self._records.append(json.loads(json.dumps(dict(record))))

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every turn kept, in the order they arrived."""
        return list(self._records)

    def sessions(self) -> dict[str, list[dict[str, Any]]]:
        """Each session's turns, by item id, in turn order."""
        found: dict[str, list[dict[str, Any]]] = {}
        for record in self._records:
            found.setdefault(str(record["item"]), []).append(record)
        return {item: sorted(turns, key=lambda r: int(r["turn"])) for item, turns in found.items()}


def session_over(turns: list[dict[str, Any]], last_turn: int) -> bool:
    """Whether a session's kept turns end it: its last turn played, or a failure."""
    return bool(turns) and (turns[-1]["failure"] is not None or int(turns[-1]["turn"]) >= last_turn)
