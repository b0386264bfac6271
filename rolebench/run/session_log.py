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
from rolebench.storage.jsonl import parse_json


def logged_tasks(folder: RunFolder) -> list[str]:
    """The tasks whose sessions file the run folder holds (`RunFolder.session_log_path`)."""
    where = folder.path / SESSIONS_DIR
    return sorted(p.stem for p in where.glob("*.jsonl")) if where.is_dir() else []


def judge_logs(folder: RunFolder, task: str) -> dict[str, Path]:
    """A session task's second judges' verdict files, by judge name (`session_log_path(task, judge=...)`)."""
    played = folder.session_log_path(task)
    return {p.parent.name: p for p in sorted((played.parent / SESSION_JUDGES_DIR).glob(f"*/{played.name}"))}


def read_log(path: str | Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A sessions file's header and turn records, read only (a torn last line is left out; None and no
    records when the file is not there or empty)."""
    path = Path(path)
    if not path.is_file():
        return None, []
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]  # a line torn by a kill: nothing was promised of it
    lines = [parse_json(line.decode("utf-8"), f"{path}:{n}") for n, line in enumerate(whole.splitlines(), 1)]
    if not lines:
        return None, []
    first = lines[0]
    if not isinstance(first, dict) or not isinstance(first.get("header"), dict):
        raise DataError(
            "not a sessions file: its first line is not a header",
            where=f"{path}:1",
            fix="remove the file (its sessions are played again) or point at another run folder",
        )
    return first["header"], [line for line in lines[1:] if isinstance(line, dict)]


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
