"""Errors a user can fix: each prints as one line (what, where, what to do) and exits with code 2
(`RunFailed`, a run that failed as a whole: 1).

The family is defined in `model_adapters.errors` (the ground floor, so that backends can raise it);
`RoleBenchError` is its base under the name users know, and `DataError` is added here.

The Python API fails the Python way: `ConfigError` (a bad option or argument) and `DataError` (a bad
data file) are `ValueError`s, as pydantic's ValidationError is, and `ConfigTypeError` (an argument of
the wrong type) is a `TypeError` as well; the command line prints each as its one line all the same.
"""

from __future__ import annotations

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


__all__ = [
    "ConfigError",
    "ConfigTypeError",
    "DataError",
    "MissingDependency",
    "ModelError",
    "RoleBenchError",
    "RunFailed",
    "first_line",
    "kind_of",
]
