"""Reading and writing a run folder's result files: `results.json` and `samples/<task>.jsonl`.

Writes are atomic (a reader never sees half a file). Reads validate against the typed records, so
a damaged or foreign file is one clear `DataError`, not a traceback. Task names become file names
only when they are safe ones (letters, digits, `_`, `-`, `.`; no path separators).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from model_adapters.files import file_sha256
from rolebench.errors import DataError
from rolebench.results.schema import RunResults, SampleRecord
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic
from rolebench.storage.jsonl import read_json, read_jsonl

RESULTS_FILE = "results.json"
SAMPLES_DIR = "samples"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def check_task_name(task: str, where: str) -> str:
    """A task name that may become a file name; a DataError for anything else (e.g. `../../x`)."""
    if not isinstance(task, str) or not _SAFE_NAME.match(task) or ".." in task:
        raise DataError(
            f"unsafe task name {task!r}",
            where=where,
            fix="task names are letters, digits, '_', '-' and '.'; the file was altered",
        )
    return task


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{message} at {'.'.join(map(str, first['loc'])) or 'the top'}"


def write_results(run_dir: Path, results: RunResults) -> Path:
    """Write DIR/results.json atomically."""
    path = Path(run_dir) / RESULTS_FILE
    write_json_atomic(path, results.model_dump(mode="json"))
    return path


def read_results(path: str | Path) -> RunResults:
    """Read a results.json (or the one inside a run folder); one clear error if it is not one."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.is_file():
        raise DataError(
            "no results file", where=str(path), fix="pass a run folder written by `rolebench evaluate`"
        )
    try:
        results = RunResults.model_validate(read_json(path))
    except DataError as exc:
        raise DataError(
            f"damaged results file ({exc.what})", where=exc.where, fix=damaged_fix(path) or exc.fix
        ) from None
    except ValidationError as exc:
        raise DataError(
            f"not a rolebench results file: {_first_error(exc)}", where=str(path), fix=damaged_fix(path)
        ) from None
    for task in results.results:
        try:
            check_task_name(task, str(path))
        except DataError as exc:
            rebuild = damaged_fix(path)
            raise DataError(
                exc.what, where=exc.where, fix=f"{exc.fix}: {rebuild}" if rebuild else exc.fix
            ) from None
    return results


def damaged_fix(path: Path) -> str | None:
    """What to do about a damaged results.json: in a run folder, rebuild it from the run's saved files."""
    if path.name != RESULTS_FILE or not (path.parent / SAMPLES_DIR).is_dir():
        return None
    return (
        f"rebuild it from the run's samples files and generation store: `rolebench score {path.parent}` "
        "(or the same `rolebench evaluate` command with --overwrite)"
    )


def samples_path(run_dir: Path, task: str) -> Path:
    return Path(run_dir) / SAMPLES_DIR / f"{check_task_name(task, str(run_dir))}.jsonl"


def write_samples(run_dir: Path, task: str, records: Sequence[SampleRecord]) -> str:
    """Write a task's samples file atomically; the sha256 of what was written (results.json keeps it)."""
    path = samples_path(run_dir, task)
    write_jsonl_atomic(path, (r.model_dump(mode="json") for r in records))
    return file_sha256(path)


def stale_tasks(run_dir: Path, results: RunResults) -> list[str]:
    """Tasks whose samples file is not the one results.json was computed from (an interrupted write)."""
    stale = []
    for task, result in results.results.items():
        path = samples_path(run_dir, task)
        if result.samples_sha256 is not None and (
            not path.is_file() or file_sha256(path) != result.samples_sha256
        ):
            stale.append(task)
    return stale


def read_samples(run_dir: Path, task: str) -> list[SampleRecord]:
    """The typed samples of a task; a missing or damaged file is one DataError naming it."""
    path = samples_path(run_dir, task)
    if not path.is_file():
        raise DataError(
            f"no samples file for task {task}",
            where=str(path),
            fix="re-run `rolebench evaluate` for this task",
        )
    records = []
    for number, raw in enumerate(read_jsonl(path), 1):
        try:
            records.append(SampleRecord.model_validate(raw))
        except ValidationError as exc:
            raise DataError(
                f"not a rolebench samples line: {_first_error(exc)}",
                where=f"{path}:{number}",
                fix="re-run `rolebench evaluate` for this task",
            ) from None
    return records
