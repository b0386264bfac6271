"""Reading the result files of a run, validated: a results document, a samples file, a judgments file.

Reads validate against the typed records, so a damaged or foreign file is one clear `DataError`, not a
traceback. Task names become file names only when they are safe ones (letters, digits, `_`, `-`, `.`;
no path separators). Where these files live, and writing them, is `rolebench.run.folder`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from model_adapters.files import file_sha256
from rolebench.errors import DataError
from rolebench.results.schema import JudgmentLine, RunResults, SampleRecord
from rolebench.storage.files import is_safe_name
from rolebench.storage.jsonl import numbered_jsonl, read_json, read_jsonl


def check_task_name(task: str, where: str) -> str:
    """A task name that may become a file name; a DataError for anything else (e.g. `../../x`)."""
    if not is_safe_name(task):
        raise DataError(
            f"unsafe task name {task!r}",
            where=where,
            fix="task names are letters, digits, '_', '-' and '.'; the file was altered",
        )
    return task


def first_error(exc: ValidationError) -> str:
    """The first problem of a ValidationError, with where it is."""
    first = exc.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{message} at {'.'.join(map(str, first['loc'])) or 'the top'}"


def read_results_file(path: Path, damaged_fix: str | None = None) -> RunResults:
    """Read a results document; one clear error if it is not one (`damaged_fix`: what to do then)."""
    if not path.is_file():
        raise DataError(
            "no results file", where=str(path), fix="pass a run folder written by `rolebench evaluate`"
        )
    try:
        results = RunResults.model_validate(read_json(path))
    except DataError as exc:
        raise DataError(
            f"damaged results file ({exc.what})", where=exc.where, fix=damaged_fix or exc.fix
        ) from None
    except ValidationError as exc:
        raise DataError(
            f"not a rolebench results file: {first_error(exc)}", where=str(path), fix=damaged_fix
        ) from None
    for task in results.results:
        try:
            check_task_name(task, str(path))
        except DataError as exc:
            fix = f"{exc.fix}: {damaged_fix}" if damaged_fix else exc.fix
            raise DataError(exc.what, where=exc.where, fix=fix) from None
    return results


def read_samples_file(path: Path, task: str) -> list[SampleRecord]:
    """The typed samples of a task; a missing or damaged file is one DataError naming it."""
    if not path.is_file():
        raise DataError(
            f"no samples file for task {task}",
            where=str(path),
            fix="run `rolebench evaluate` for this task again",
        )
    records = []
    for number, raw in enumerate(read_jsonl(path), 1):
        try:
            records.append(SampleRecord.model_validate(raw))
        except ValidationError as exc:
            raise DataError(
                f"not a rolebench samples line: {first_error(exc)}",
                where=f"{path}:{number}",
                fix="run `rolebench evaluate` for this task again (its answers are stored)",
            ) from None
    return records


def read_judgments_file(path: Path, digest: str | None, fix: str) -> list[dict[str, Any]]:
    """The lines of a judgments file, checked as samples files are: against the sha256 its judge recorded
    when it wrote the file (`digest`; None: an older rolebench recorded none), one line per pair, known
    statuses and outcomes of the right types. Anything else is one DataError naming the file (and line)."""
    if not path.is_file():
        return []
    if digest is not None and file_sha256(path) != digest:
        raise DataError(
            f"judgments file changed since the judge wrote it (sha256 {digest[:8]} recorded)",
            where=str(path),
            fix=fix,
        )
    lines, seen = [], set()
    for number, raw in numbered_jsonl(path):
        try:
            line = JudgmentLine.model_validate(raw)
        except ValidationError as exc:
            raise DataError(
                f"not a rolebench judgments line: {first_error(exc)}", where=f"{path}:{number}", fix=fix
            ) from None
        if line.id in seen:
            raise DataError(f"pair {line.id} is judged twice", where=f"{path}:{number}", fix=fix)
        seen.add(line.id)
        lines.append(raw)
    return lines
