"""A run folder: every file name of it, its lock, and reading and writing each of its files.

```
DIR/run.json                     the run record: its definition and config as planned (written first)
DIR/results.json                 derived from the files below by one function (rolebench.evaluation.derive)
DIR/samples/<task>.jsonl         one scored SampleRecord per sample, in dataset order
DIR/generations.sqlite           every answer as it arrived (resume; samples files are rebuilt from it)
DIR/judgments/<judge>/           against the RoleGPT baseline, one folder per judge: judge.json + <task>.jsonl
DIR/judgments/versus/<run>/<judge>/   against another run (`judge --against`), one folder per opponent
DIR/report.html                  `rolebench report`
DIR/.rolebench.lock              one command at a time
```

`RunFolder` is the one place these names are spelled. Writes are atomic; reads validate (a damaged
file is one DataError naming it). `lock()` holds the folder for one command: a second command waits up
to `WAIT_S` seconds, then is refused in one line; temporary files an interrupted write left are removed
under the lock; a folder the command created is removed again (still under the lock) when it fails
before storing anything, and a command that waited for it makes it again (or, reading, says it is gone).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from model_adapters.files import file_sha256
from rolebench.errors import ConfigError, DataError
from rolebench.results.io import check_task_name, read_judgments_file, read_results_file, read_samples_file
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic
from rolebench.storage.jsonl import read_json
from rolebench.storage.records import RecordStore, count_records

RUN_FILE = "run.json"
RESULTS_FILE = "results.json"
SAMPLES_DIR = "samples"
GENERATIONS_FILE = "generations.sqlite"
GENERATIONS_TABLE = "generations"
ANSWER_FIELD = "output"  # the field of a stored answer that holds its text (`cached_model.answer_record`)
JUDGMENTS_DIR = "judgments"
VERSUS_DIR = "versus"
JUDGE_FILE = "judge.json"
REPORT_FILE = "report.html"
LOCK_FILE = ".rolebench.lock"
MAX_TAKES = 5  # a folder removed while waiting for it, made again and locked: this many tries
WAIT_S = 10.0
STORE_FILES = (GENERATIONS_FILE, f"{GENERATIONS_FILE}-wal", f"{GENERATIONS_FILE}-shm")
RUN_FILES = (RESULTS_FILE, RUN_FILE, SAMPLES_DIR, JUDGMENTS_DIR, REPORT_FILE)
# What `rolebench.storage.files.write_text_atomic` names its temporary files: ".<name>.<random>".
_TEMPORARY = re.compile(r"^\.[^/]+\.(?:json|jsonl|html|md|csv|tex)\.[A-Za-z0-9_]{6,}$")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """A file-safe name for `text` (letters, digits, `.`, `_`, `-`)."""
    return _SLUG.sub("_", text).strip("_.") or "unnamed"


@dataclass(frozen=True)
class JudgmentSet:
    """One folder of judgments: a judge's verdicts on the run's answers against the RoleGPT baseline
    (`opponent` None) or against another run's answers (`opponent`: that run's folder name here)."""

    folder: Path
    opponent: str | None = None
    legacy: bool = False  # judgments written before judge folders existed (their meta is in results.json)

    @property
    def meta_path(self) -> Path:
        """judge.json: how these judgments were made."""
        return self.folder / JUDGE_FILE

    def meta(self) -> dict[str, Any] | None:
        """judge.json: how these judgments were made (None: none written)."""
        path = self.meta_path
        if not path.is_file():
            return None
        data = read_json(path)
        if not isinstance(data, dict):
            raise DataError("a judge.json is not a JSON object", where=str(path), fix="run the judge again")
        return data

    def tasks(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.jsonl")) if self.folder.is_dir() else []

    def path_of(self, task: str) -> Path:
        return self.folder / f"{check_task_name(task, str(self.folder))}.jsonl"

    def lines(self, task: str) -> list[dict[str, Any]]:
        """A task's judgment lines, checked (`rolebench.results.io.read_judgments_file`: the digest
        judge.json records, one verdict per pair, known values); one DataError naming what fails."""
        meta = self.meta() or {}
        digest = (meta.get("sha256") or {}).get(task) if isinstance(meta.get("sha256"), dict) else None
        judge = meta.get("spec") or "SPEC"
        fix = (
            f"judge again (`rolebench judge RUN --judge {judge}` writes the file again from the judgment "
            "cache), or move the file aside"
        )
        return read_judgments_file(self.path_of(task), digest if isinstance(digest, str) else None, fix)

    def write(self, lines: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> None:
        """Each task's lines, then judge.json with every file's sha256 (atomically, each)."""
        try:
            digests = dict((self.meta() or {}).get("sha256") or {})
        except DataError:  # a damaged judge.json is replaced
            digests = {}
        for task, task_lines in lines.items():
            write_jsonl_atomic(self.path_of(task), task_lines)
            digests[task] = file_sha256(self.path_of(task))
        write_json_atomic(self.meta_path, {**meta, "sha256": digests})

    def take_files(self, other: JudgmentSet, meta: dict[str, Any]) -> None:
        """Move the judgments files of `other` (a set an older rolebench wrote) into this set's folder,
        with `meta` as its judge.json, written as given."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in other.folder.glob("*.jsonl"):
            os.replace(path, self.folder / path.name)
        write_json_atomic(self.meta_path, meta)


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
    def report_path(self) -> Path:
        return self.path / REPORT_FILE

    @property
    def samples_dir(self) -> Path:
        return self.path / SAMPLES_DIR

    def samples_path(self, task: str) -> Path:
        return self.samples_dir / f"{check_task_name(task, str(self.path))}.jsonl"

    # the lock -------------------------------------------------------------------------------------

    @contextmanager
    def lock(self, *, create: bool = False, wait_s: float | None = None) -> Iterator[RunFolder]:
        """Hold the folder for one command (creating it when `create`); refuse in one line if it stays
        busy. A folder created here is removed again if the command fails before storing anything."""
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(
                f"{self.path} is a file, not a run folder", where=str(self.path), fix="choose a folder"
            )
        blocking = next((p for p in self.path.parents if p.exists() and not p.is_dir()), None)
        if create and blocking is not None:
            raise ConfigError(
                f"{blocking} is a file, so no run folder can be made under it",
                where=str(self.path),
                fix="choose a folder whose parents are folders",
            )
        created = not self.path.exists()
        if created and not create:
            raise DataError(
                "no such run folder",
                where=str(self.path),
                fix="pass a folder written by `rolebench evaluate`",
            )
        wait_s = WAIT_S if wait_s is None else wait_s
        lock, created = self._take(created, create, wait_s)
        succeeded = False
        try:
            self.clean_temporary_files()
            yield self
            succeeded = True
        finally:
            # removed while still held: a command waiting on this lock then finds the folder gone
            if created and not succeeded and not self.holds_answers():
                shutil.rmtree(self.path, ignore_errors=True)
            lock.release()

    def _take(self, created: bool, create: bool, wait_s: float) -> tuple[FileLock, bool]:
        """The folder's lock, held; and whether this command created the folder. A folder removed while
        this command waited (a failing command removes the folder it created) is made again when
        `create`, else refused in one line."""
        for _ in range(MAX_TAKES):
            self.path.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.path / LOCK_FILE), is_singleton=False, thread_local=False)
            try:
                lock.acquire(timeout=wait_s)
            except Timeout:
                raise ConfigError(
                    "another rolebench command is using this run folder",
                    where=str(self.path),
                    fix=f"wait for it to finish (waited {wait_s:.0f} s), or use another folder",
                ) from None
            except FileNotFoundError:  # removed between mkdir and opening the lock file
                pass
            else:
                if _holds(lock, self.path / LOCK_FILE):
                    return lock, created
                lock.release()  # the folder was removed while this command waited for it
            if not create:
                raise DataError(
                    "no such run folder (the command that created it failed and removed it)",
                    where=str(self.path),
                    fix="pass a folder written by `rolebench evaluate`",
                )
            created = True
        raise ConfigError(  # pragma: no cover - a folder removed again and again by others
            "this run folder keeps being removed by other commands",
            where=str(self.path),
            fix="run one command at a time on it",
        )

    def wait_until_free(self, wait_s: float) -> None:
        """Wait while another process holds the folder (take it with `lock` right after)."""
        if not (self.path / LOCK_FILE).is_file():
            return
        lock = FileLock(str(self.path / LOCK_FILE), is_singleton=False, thread_local=False)
        try:
            lock.acquire(timeout=wait_s)
        except Timeout:
            raise ConfigError(
                f"another rolebench command has held this run folder for {wait_s:.0f} s",
                where=str(self.path),
                fix="wait for it to finish, then run the command again",
            ) from None
        lock.release()

    def clean_temporary_files(self) -> list[Path]:
        """Remove the temporary files interrupted writes left (call under the lock)."""
        removed = []
        folders = [self.path, self.samples_dir, *self._judgment_folders()]
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
        base = self.judgments_dir if opponent is None else self.judgments_dir / VERSUS_DIR / opponent
        return JudgmentSet(base / judge, opponent)

    def judgment_sets(self) -> list[JudgmentSet]:
        """Every set of judgments the folder holds, those written by an older rolebench included."""
        root = self.judgments_dir
        if not root.is_dir():
            return []
        found = [JudgmentSet(root, None, legacy=True)] if any(root.glob("*.jsonl")) else []
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name != VERSUS_DIR):
            found.append(JudgmentSet(folder, None))
        versus = root / VERSUS_DIR
        for opponent in sorted(p for p in versus.iterdir() if p.is_dir()) if versus.is_dir() else []:
            if any(opponent.glob("*.jsonl")):
                found.append(JudgmentSet(opponent, opponent.name, legacy=True))
            found += [
                JudgmentSet(f, opponent.name) for f in sorted(p for p in opponent.iterdir() if p.is_dir())
            ]
        return found

    def _judgment_folders(self) -> list[Path]:
        root = self.judgments_dir
        if not root.is_dir():
            return []
        return [root, *(p for p in root.rglob("*") if p.is_dir())]


def _holds(lock: FileLock, path: Path) -> bool:
    """Whether the file `lock` holds is still the one at `path` (not a lock file removed meanwhile)."""
    fd = lock._context.lock_file_fd  # filelock's open descriptor of the file it locked
    try:
        return fd is not None and os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


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
