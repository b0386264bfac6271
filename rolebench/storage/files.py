"""Writing result files atomically: a reader never sees a half-written file; names safe as file names."""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from model_adapters.secrets import hide_secrets

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
SAFE_NAME_RULE = "letters, digits, '_', '-' and '.' (at most 128, no '..')"


def is_safe_name(name: object) -> bool:
    """Whether a name (a task's) may become a file name: no separator, no `..`, not hidden."""
    return isinstance(name, str) and bool(_SAFE_NAME.match(name)) and ".." not in name


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write to a temporary file beside `path`, then rename it over `path`; secrets hidden by value."""
    text = hide_secrets(text)
    target = Path(path)
    try:
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
        blocking = next((p for p in target.parents if p.exists()), None)
        if blocking is not None and not blocking.is_dir():  # a file where a folder of the path belongs
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(blocking))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise _naming(exc, target) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _naming(exc, target) from None
        raise


def _naming(exc: OSError, target: Path) -> OSError:
    """The error as the user's file gives it (not the temporary file beside it that an OS call named)."""
    if exc.filename == str(target) or isinstance(exc, NotADirectoryError | IsADirectoryError):
        return exc
    return type(exc)(exc.errno, exc.strerror or str(exc), str(target))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomic(path: str | Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def write_jsonl_atomic(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
