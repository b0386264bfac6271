"""Errors a user can fix: each prints as one line (what, where, what to do) and exits with code 2.

They are defined on the ground floor, so that model backends raise them without importing
`rolebench`; `rolebench.errors` re-exports them (as `RoleBenchError` and friends) and adds its own.
"""

from __future__ import annotations


class UserError(Exception):
    """Base class of every error caused by the user's input or environment, not by a bug."""

    exit_code = 2

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.what, self.where, self.fix = what, where, fix
        super().__init__(self.line())

    def line(self) -> str:
        """The one line shown to the user."""
        text = self.what
        if self.where:
            text += f" ({self.where})"
        if self.fix:
            text += f": {self.fix}"
        return text


class ConfigError(UserError, ValueError):
    """A bad option, spec, task name or task file; a bad argument of a library function.

    A `ValueError` too (as pydantic's ValidationError is), so a caller of the Python API catches it the
    Python way; the command line still prints it as one line, exit 2.
    """


class ModelError(UserError):
    """A model or API that cannot be used as asked (bad key, unknown model, refused request)."""


class MissingDependency(UserError):
    """An optional package that the chosen feature needs is not installed."""

    def __init__(self, feature: str, packages: str, extra: str, install: str | None = None) -> None:
        super().__init__(
            f"{feature} needs {packages}, which is not installed",
            fix=install or f'pip install "rolebench[{extra}]"',  # `install`: a command when no extra fits
        )


def first_line(error: BaseException) -> str:
    """The first line of an exception's message (at most 300 characters), for one-line errors."""
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]
