"""Errors a user can fix: each prints as one line (what, where, what to do) and exits with code 2
(`RunFailed`, a run that failed as a whole: 1).

The family is defined in `model_adapters.errors` (the ground floor, so that backends can raise it);
`RoleBenchError` is its base under the name users know, and `DataError` is added here.

The Python API fails the Python way: `ConfigError` (a bad option or argument) and `DataError` (a bad
data file) are `ValueError`s, as pydantic's ValidationError is, and `ConfigTypeError` (an argument of
the wrong type) is a `TypeError` as well; the command line prints each as its one line all the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from model_adapters.errors import ConfigError, MissingDependency, ModelError, first_line
from model_adapters.errors import UserError as RoleBenchError


class DataError(RoleBenchError, ValueError):
    """A missing or malformed data file."""


class ConfigTypeError(ConfigError, TypeError):
    """An argument of the wrong type (a list where a text belongs, a text where a number does): a
    `TypeError`, and a `ConfigError` (so a `ValueError` too) like every other bad argument."""


def kind_of(value: object) -> str:
    """What a value is, for a message: "None", "an int", "a list"."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


class RunFailed(RoleBenchError):
    """The command ran and failed (nothing to score, the Ray cluster lost): one line, exit 1."""

    exit_code = 1


_COMMAND_LINE: ContextVar[bool] = ContextVar("rolebench_command_line", default=False)
_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")


@contextmanager
def command_line() -> Iterator[None]:
    """While a command runs (`rolebench.cli.main`): its errors keep naming the command's flags."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def in_python_terms(error: RoleBenchError, options: Mapping[str, str]) -> None:
    """An error raised under a Python API call names the call's options where its one message names the
    command's flags (`--data-dir` -> `data_dir=`, `--overwrite` -> `overwrite=True`): `options` maps each
    option to how it is written. Nothing changes under a command (`command_line`)."""
    if _COMMAND_LINE.get():
        return

    def rename(text: str | None) -> str | None:
        if text is None:
            return None
        return _FLAG.sub(lambda m: options.get(m[1].replace("-", "_"), m[0]), text)

    error.what = rename(error.what) or error.what
    error.where, error.fix = rename(error.where), rename(error.fix)
    error.args = (error.line(),)


__all__ = [
    "ConfigError",
    "ConfigTypeError",
    "DataError",
    "MissingDependency",
    "ModelError",
    "RoleBenchError",
    "RunFailed",
    "command_line",
    "first_line",
    "in_python_terms",
    "kind_of",
]
