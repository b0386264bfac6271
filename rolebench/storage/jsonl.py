"""Reading JSON and JSON Lines files, with one clear error for every way a file can be broken.

UTF-8 with or without a byte-order mark, LF or CRLF line ends: all read alike. Bytes that are not
UTF-8, a line that is not a JSON object, JSON nested too deeply to parse, a folder where a file
should be, an unreadable file: each is a `DataError` naming the file (and line) and what to do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rolebench.errors import DataError

REPAIR = "repair or re-download the file"


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    if path.is_dir():
        raise DataError("expected a file, found a folder", where=str(path), fix=REPAIR)
    try:
        with open(path, encoding="utf-8-sig", newline=None) as handle:
            yield from enumerate(handle, 1)
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", where=str(path), fix=REPAIR) from None
    except OSError as exc:
        raise DataError(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None


def parse_json(text: str, where: str) -> Any:
    """`json.loads` with a DataError for malformed or absurdly nested JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", where=where, fix=REPAIR) from None
    except RecursionError:
        raise DataError("JSON nested too deeply", where=where, fix=REPAIR) from None


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, one per non-blank line."""
    for _, record in numbered_jsonl(path):
        yield record


def numbered_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) of every non-blank line of a JSONL file."""
    path = Path(path)
    for number, line in _text_lines(path):
        if not line.strip():
            continue
        record = parse_json(line, f"{path}:{number}")
        if not isinstance(record, dict):
            raise DataError(
                f"expected a JSON object, found {type(record).__name__}", where=f"{path}:{number}", fix=REPAIR
            )
        yield number, record


def read_json(path: str | Path) -> Any:
    """The JSON value of a file."""
    path = Path(path)
    return parse_json("".join(line for _, line in _text_lines(path)), str(path))
