"""An append-only SQLite record store: generations and judgments are saved the moment they arrive.

Keys are content hashes (`content_key`) of everything that determines a record (model identity,
decoding settings, the exact messages), so an interrupted run resumes by looking its keys up, and
a different model, judge or prompt never sees another's records. Safe to use from many threads.

The store's layout (a table of `key`, `record` as JSON text, `created`; records set aside in
`<table>_set_aside`) is known here alone: `RecordStore` reads and writes it, `count_records` counts a
store another process may be writing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

from model_adapters.secrets import hide_secrets

CACHE_ENV = "ROLEBENCH_CACHE"


def cache_dir() -> Path:
    """The user cache dir for stores shared across runs (judgments, recipes): `$ROLEBENCH_CACHE`,
    else `platformdirs.user_cache_dir("rolebench")`."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("rolebench"))


def content_key(*parts: Any) -> str:
    """sha256 of the canonical JSON of `parts`: the identity of a record."""
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RecordStore:
    """`key -> JSON record` in one table of one SQLite file; writes are committed one by one."""

    def __init__(self, path: str | Path, table: str = "records") -> None:
        if not table.isidentifier():
            raise ValueError(f"bad table name {table!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.table = table
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, record TEXT NOT NULL, created REAL)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(f"SELECT record FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored records among `keys` (missing keys are absent from the result)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, record FROM {self.table} WHERE key IN ({marks})", chunk
                ).fetchall()
                found.update((k, json.loads(r)) for k, r in rows)
        return found

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store a record and commit at once (a later put of the same key replaces it); secrets hidden."""
        text = hide_secrets(json.dumps(record, ensure_ascii=False))
        with self._lock:
            self._db.execute(
                f"INSERT OR REPLACE INTO {self.table} (key, record, created) VALUES (?, ?, ?)",
                (key, text, time.time()),
            )
            self._db.commit()

    def set_aside(self, problems: dict[str, str]) -> None:
        """Move the records of `problems` (key -> what is wrong) out of the table into `<table>_set_aside`
        (kept with the problem for a look, never served again); the keys are then missing."""
        aside = f"{self.table}_set_aside"
        with self._lock:
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {aside} "
                "(key TEXT, record TEXT NOT NULL, problem TEXT, created REAL)"
            )
            for key, problem in problems.items():
                self._db.execute(
                    f"INSERT INTO {aside} (key, record, problem, created) "
                    f"SELECT key, record, ?, ? FROM {self.table} WHERE key = ?",
                    (problem, time.time(), key),
                )
                self._db.execute(f"DELETE FROM {self.table} WHERE key = ?", (key,))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def count_records(path: str | Path, field: str, table: str | None = None, *, null_too: bool = False) -> int:
    """The records of the store file `path` whose JSON sets `field` (`null_too`: null counts), in `table`
    (None: every table, records set aside included). The file is opened read-only, so another process
    may be writing it; one that is not a store raises `sqlite3.Error`."""
    test = "json_type(record, ?)" if null_too else "json_extract(record, ?)"
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        tables = (
            [table]
            if table is not None
            else [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        )
        query = 'SELECT COUNT(*) FROM "{}" WHERE {} IS NOT NULL'
        return sum(
            int(db.execute(query.format(name, test), (f"$.{field}",)).fetchone()[0]) for name in tables
        )
