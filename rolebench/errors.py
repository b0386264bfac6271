"""Errors a user can fix: each prints as one line (what, where, what to do) and exits with code 2
(`RunFailed`, a run that failed as a whole: 1).

The family is defined in `model_adapters.errors` (the ground floor, so that backends can raise it);
`RoleBenchError` is its base under the name users know, and `DataError` is added here.
"""

from __future__ import annotations

from model_adapters.errors import ConfigError, MissingDependency, ModelError, first_line
from model_adapters.errors import UserError as RoleBenchError


class DataError(RoleBenchError):
    """A missing or malformed data file."""


class RunFailed(RoleBenchError):
    """The command ran and failed (nothing to score, the Ray cluster lost): one line, exit 1."""

    exit_code = 1


__all__ = [
    "ConfigError",
    "DataError",
    "MissingDependency",
    "ModelError",
    "RoleBenchError",
    "RunFailed",
    "first_line",
]
