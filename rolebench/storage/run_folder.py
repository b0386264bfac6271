"""One command at a time on a run folder: a lock, left-over temporary files cleaned, no empty folder left.

`rolebench evaluate`, `score`, `judge` and `report` hold the folder's lock while they read and write
it: a second command waits up to `WAIT_S` seconds, then is refused in one line. Under the lock, any
temporary file an interrupted atomic write left behind is stale and removed. A folder this command
created is removed again when the command fails before writing anything into it.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from rolebench.errors import ConfigError, DataError

LOCK_FILE = ".rolebench.lock"
WAIT_S = 10.0
# What `rolebench.storage.files.write_text_atomic` names its temporary files: ".<name>.<random>".
_TEMPORARY = re.compile(r"^\.[^/]+\.(?:json|jsonl|html|md|csv|tex)\.[A-Za-z0-9_]{6,}$")


def clean_temporary_files(run_dir: Path) -> list[Path]:
    """Remove the temporary files interrupted writes left in a run folder (call under its lock)."""
    removed = []
    for folder in (run_dir, run_dir / "samples", run_dir / "judgments"):
        if folder.is_dir():
            for path in folder.iterdir():
                if path.is_file() and _TEMPORARY.match(path.name):
                    path.unlink(missing_ok=True)
                    removed.append(path)
    return removed


@contextmanager
def locked_run(run_dir: Path, *, create: bool = False, wait_s: float | None = None) -> Iterator[Path]:
    """Hold `run_dir`'s lock (creating the folder when `create`); refuse in one line if it stays busy."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"{run_dir} is a file, not a run folder", where=str(run_dir), fix="choose a folder")
    created = not run_dir.exists()
    if created and not create:
        raise DataError(
            "no such run folder", where=str(run_dir), fix="pass a folder written by `rolebench evaluate`"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    wait_s = WAIT_S if wait_s is None else wait_s
    lock = FileLock(str(run_dir / LOCK_FILE), is_singleton=False, thread_local=False)
    try:
        lock.acquire(timeout=wait_s)
    except Timeout:
        raise ConfigError(
            "another rolebench command is using this run folder",
            where=str(run_dir),
            fix=f"wait for it to finish (waited {wait_s:.0f} s), or use another folder",
        ) from None
    succeeded = False
    try:
        clean_temporary_files(run_dir)
        yield run_dir
        succeeded = True
    finally:
        lock.release()
        if created and not succeeded and not holds_answers(run_dir):
            shutil.rmtree(run_dir, ignore_errors=True)


def holds_answers(run_dir: Path) -> bool:
    """Whether a run folder holds anything worth keeping: results, samples, or a generation store with an
    answer in it (a store holding at most the model's description is not)."""
    for path in run_dir.iterdir():
        if path.name in (LOCK_FILE, "run.json") or path.name.endswith(("-wal", "-shm", "-journal")):
            continue
        if path.suffix == ".sqlite":
            if _records(path) > 1:
                return True
            continue
        return True
    return False


def _records(path: Path) -> int:
    """Rows over every table of an SQLite file (a damaged one counts as worth keeping)."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return sum(int(db.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]) for name in tables)
    except sqlite3.Error:
        return 2
