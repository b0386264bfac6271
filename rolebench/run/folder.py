"""A run folder: the paths of its files, its lock, and reading and writing each of its files.

`RunFolder` is what every other module asks for a run folder's paths: the names are spelled once, in
`rolebench.run.layout` (where the folder's layout is drawn), the judgment folders' files are handled by
`rolebench.run.judgments`, the lock by `rolebench.run.lock`, and the generation store's tables by
`rolebench.storage.records`. Writes are atomic; reads validate (a damaged file is one DataError naming
it). `lock()` holds the folder for one command: a second command waits up to `WAIT_S` seconds, then is
refused in one line; temporary files an interrupted write left are removed under the lock; a folder the
command created is removed again (still under the lock) when it fails before storing anything.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from rolebench.errors import DataError
from rolebench.results.io import check_task_name, read_results_file, read_samples_file
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.run.judgments import JudgmentSet, judgment_folders, judgment_set_folder, judgment_sets
from rolebench.run.layout import (
    ANSWER_FIELD,
    GENERATIONS_FILE,
    GENERATIONS_TABLE,
    JUDGMENTS_DIR,
    LOCK_FILE,
    REPORT_FILE,
    RESULTS_FILE,
    RUN_FILE,
    RUN_FILES,
    SAMPLES_DIR,
    SESSION_JUDGES_DIR,
    SESSIONS_DIR,
    STORE_FILES,
    slug,
)
from rolebench.run.lock import FolderLock
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic
from rolebench.storage.jsonl import read_json
from rolebench.storage.records import RecordStore, count_records

__all__ = [  # names of the layout and the judgment sets that reach callers through this module too
    "LOCK_FILE",
    "RESULTS_FILE",
    "WAIT_S",
    "JudgmentSet",
    "RunFolder",
    "read_results",
    "read_samples",
    "write_results",
    "write_samples",
]

WAIT_S = 10.0  # how long a command waits for another one holding the folder
# What `rolebench.storage.files.write_text_atomic` names its temporary files: ".<name>.<random>".
_TEMPORARY = re.compile(r"^\.[^/]+\.(?:json|jsonl|html|md|csv|tex)\.[A-Za-z0-9_]{6,}$")


class RunFolder:
    """One run folder (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    # paths ----------------------------------------------------------------------------------------

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_FILE

    @property
    def record_path(self) -> Path:
        return self.path / RUN_FILE

    @property
    def generations_path(self) -> Path:
        return self.path / GENERATIONS_FILE

    @property
    def judgments_dir(self) -> Path:
        return self.path / JUDGMENTS_DIR

    @property
    def lock_path(self) -> Path:
        return self.path / LOCK_FILE

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_FILE

    @property
    def samples_dir(self) -> Path:
        return self.path / SAMPLES_DIR

    def samples_path(self, task: str) -> Path:
        return self.samples_dir / f"{check_task_name(task, str(self.path))}.jsonl"

    def session_log_path(self, task: str, judge: str | None = None) -> Path:
        """A session task's turns as played, or (`judge`: its name) a second judge's verdicts on them."""
        judged = () if judge is None else (SESSION_JUDGES_DIR, slug(judge))
        return self.path.joinpath(SESSIONS_DIR, *judged, f"{check_task_name(task, str(self.path))}.jsonl")

    # the lock -------------------------------------------------------------------------------------

    @contextmanager
    def lock(self, *, create: bool = False, wait_s: float | None = None) -> Iterator[RunFolder]:
        """Hold the folder for one command (creating it when `create`); refuse in one line if it stays
        busy (`WAIT_S` seconds unless `wait_s`). Temporary files interrupted writes left are removed; a
        folder created here is removed again if the command fails before storing anything."""
        wait_s = WAIT_S if wait_s is None else wait_s
        held = FolderLock(self.path, self.lock_path)
        with held.hold(
            create=create, wait_s=wait_s, tidy=self.clean_temporary_files, worth_keeping=self.holds_answers
        ):
            yield self

    def wait_until_free(self, wait_s: float) -> None:
        """Wait while another process holds the folder (take it with `lock` right after)."""
        FolderLock(self.path, self.lock_path).wait_until_free(wait_s)

    def clean_temporary_files(self) -> list[Path]:
        """Remove the temporary files interrupted writes left (call under the lock)."""
        removed = []
        folders = [self.path, self.samples_dir, *judgment_folders(self.judgments_dir)]
        for folder in folders:
            if folder.is_dir():
                for path in folder.iterdir():
                    if path.is_file() and _TEMPORARY.match(path.name):
                        path.unlink(missing_ok=True)
                        removed.append(path)
        return removed

    def holds_answers(self) -> bool:
        """Whether the folder holds anything worth keeping: results, samples, or a generation store with an
        answer in it (a store holding at most the model's description is not)."""
        for path in self.path.iterdir():
            if path.name in (LOCK_FILE, RUN_FILE) or path.name.endswith(("-wal", "-shm", "-journal")):
                continue
            if path.suffix == ".sqlite":
                if _answers(path) > 0:
                    return True
                continue
            return True
        return False

    def clear(self, *, keep_store: bool) -> None:
        """Remove the run's files (its generation store too unless `keep_store`)."""
        for name in RUN_FILES + (() if keep_store else STORE_FILES):
            path = self.path / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)

    # samples --------------------------------------------------------------------------------------

    def sample_tasks(self) -> list[str]:
        """The tasks with a samples file."""
        folder = self.samples_dir
        return sorted(p.stem for p in folder.glob("*.jsonl")) if folder.is_dir() else []

    def read_samples(self, task: str) -> list[SampleRecord]:
        """A task's typed samples; a missing or damaged file is one DataError naming it."""
        return read_samples_file(self.samples_path(task), task)

    def write_samples(self, task: str, records: Sequence[SampleRecord]) -> str:
        """Write a task's samples file atomically; the sha256 of what was written."""
        path = self.samples_path(task)
        write_jsonl_atomic(path, (r.model_dump(mode="json") for r in records))
        return file_sha256(path)

    def samples_digest(self, task: str) -> str | None:
        path = self.samples_path(task)
        return file_sha256(path) if path.is_file() else None

    def stale_tasks(self, results: RunResults) -> list[str]:
        """The tasks of `results` whose samples file is missing or not the one they were computed from."""
        return [
            task
            for task, result in results.results.items()
            if result.samples_sha256 is not None and self.samples_digest(task) != result.samples_sha256
        ]

    def drop_samples(self, task: str) -> None:
        self.samples_path(task).unlink(missing_ok=True)

    # results.json ---------------------------------------------------------------------------------

    def read_results(self) -> RunResults:
        """The folder's results.json; one DataError if there is none or it is damaged."""
        if not self.results_path.is_file():
            if self.record_path.is_file():
                raise DataError(
                    "this run has no results yet (it was interrupted before any was written)",
                    where=str(self.path),
                    fix="run the same `rolebench evaluate` command again to resume it",
                )
            raise DataError(
                "no results file",
                where=str(self.path),
                fix="pass a run folder written by `rolebench evaluate`",
            )
        return read_results_file(self.results_path, self._rebuild_fix()).located(self.path)

    def write_results(self, results: RunResults) -> Path:
        write_json_atomic(self.results_path, results.model_dump(mode="json"))
        results.located(self.path)
        return self.results_path

    def _rebuild_fix(self) -> str:
        return (
            f"rebuild it from the run's saved files: `rolebench score {self.path}` (or the same "
            "`rolebench evaluate` command with --overwrite)"
        )

    # the run record (run.json) ---------------------------------------------------------------------

    def read_record_data(self) -> dict[str, Any] | None:
        """run.json as written (None: none, or not a JSON object)."""
        if not self.record_path.is_file():
            return None
        try:
            data = read_json(self.record_path)
        except DataError:
            return None
        return data if isinstance(data, dict) else None

    def write_record_data(self, data: dict[str, Any]) -> None:
        write_json_atomic(self.record_path, data)

    # the generation store --------------------------------------------------------------------------

    def generation_store(self) -> RecordStore:
        return RecordStore(self.generations_path, GENERATIONS_TABLE)

    def stored_answers(self) -> int | None:
        """The answers in the generation store (None: no store yet), read while `evaluate` may be writing
        it: a sweep's progress. An item answered with no text (a baseline's missing answer) counts."""
        if not self.generations_path.is_file():
            return None
        return count_records(self.generations_path, ANSWER_FIELD, GENERATIONS_TABLE, null_too=True)

    # judgments -------------------------------------------------------------------------------------

    def judgment_set(self, judge: str, opponent: str | None = None) -> JudgmentSet:
        """The folder of one judge's judgments (`judge`, `opponent`: file-safe names, see `slug`)."""
        return judgment_set_folder(self.judgments_dir, judge, opponent)

    def judgment_sets(self) -> list[JudgmentSet]:
        """Every set of judgments the folder holds, those written by an older rolebench included."""
        return judgment_sets(self.judgments_dir)


def _answers(path: Path) -> int:
    """Records over every table of a store file that hold an answer (a stored text); the model's
    description and items with no answer do not count. A damaged file counts as worth keeping."""
    try:
        return count_records(path, ANSWER_FIELD)
    except sqlite3.Error:
        return 1


def read_results(path: str | Path) -> RunResults:
    """A results document: a run folder's results.json, or a results file given by its path."""
    path = Path(path)
    if path.is_dir():
        return RunFolder(path).read_results()
    if path.name == RESULTS_FILE and (
        (path.parent / RUN_FILE).is_file() or (path.parent / SAMPLES_DIR).is_dir()
    ):
        return RunFolder(path.parent).read_results()  # a run folder's: a damaged one says how to rebuild it
    return read_results_file(path)


def read_samples(run: str | Path, task: str) -> list[SampleRecord]:
    """A run folder's samples of one task (`RunFolder.read_samples`)."""
    return RunFolder(run).read_samples(task)


def write_samples(run: str | Path, task: str, records: Sequence[SampleRecord]) -> str:
    """Write a run folder's samples of one task (`RunFolder.write_samples`); the file's sha256."""
    return RunFolder(run).write_samples(task, records)


def write_results(run: str | Path, results: RunResults) -> Path:
    """Write a run folder's results.json (`RunFolder.write_results`)."""
    return RunFolder(run).write_results(results)
