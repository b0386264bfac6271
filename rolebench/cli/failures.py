"""Every failure the command line can meet, as one line (what, where, what to do) and a non-zero exit.

User mistakes (`RoleBenchError`) carry their own line and exit 2. The families that bad files,
full disks and broken environments raise are mapped here to one line each, also exit 2. Anything
else is a bug: one line saying so, exit 1. `-v` prints the traceback as well.
"""

from __future__ import annotations

import errno
import sqlite3
import sys
import traceback

from model_adapters.secrets import hide_secrets
from rolebench.errors import RoleBenchError

BUG_EXIT = 1
USER_EXIT = 2


RAY_TOKEN_FIX = (
    "give this machine the cluster's token (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token), "
    "or join another cluster (--ray-address / RAY_ADDRESS)"
)


def ray_token_refused(exc: BaseException) -> str | None:
    """Ray's word when it refused this process's authentication token, anywhere in the exception's chain:
    a `ray.exceptions.AuthenticationError`, or its text inside the ConnectionError that `ray.init`
    raises after its retries. None otherwise."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "AuthenticationError" and type(current).__module__.startswith("ray"):
            return str(getattr(current, "message", "") or "authentication failed")
        text = str(current)
        if "InvalidAuthToken" in text or "ray.exceptions.AuthenticationError" in text:
            found = text[text.find("InvalidAuthToken") :] if "InvalidAuthToken" in text else ""
            return found.split(".")[0].replace("InvalidAuthToken: ", "") or "authentication failed"
        current = current.__cause__ or current.__context__
    return None


def describe(exc: BaseException) -> tuple[str, int]:
    """(the line to print after "rolebench: error: ", the exit code)."""
    if isinstance(exc, RoleBenchError):
        return exc.line(), exc.exit_code
    refused = ray_token_refused(exc)
    if refused is not None:
        return f"the Ray cluster refused this client's token ({refused}): {RAY_TOKEN_FIX}", USER_EXIT
    if isinstance(exc, ConnectionError) and not exc.filename:  # a server that is not there, not a file
        reason = exc.strerror or str(exc) or type(exc).__name__
        return f"{reason}: check the address and that the server runs, then try again", USER_EXIT
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        reason = exc.strerror or str(exc) or type(exc).__name__
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return (
                f"no space left on the device{where}: free some space, then run the command again",
                USER_EXIT,
            )
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return f"{reason}{where}: choose a folder you can write to, or fix its permissions", USER_EXIT
        return f"{reason}{where}: check the path and try again", USER_EXIT
    if isinstance(exc, sqlite3.Error):
        return (
            f"a run's store (SQLite) cannot be used: {exc}: if another command is using the run folder, "
            "wait for it; if the file is damaged, move it aside (its answers are generated again)"
        ), USER_EXIT
    if isinstance(exc, UnicodeError):
        return f"a file is not UTF-8 text ({exc}): repair or re-download it", USER_EXIT
    if isinstance(exc, MemoryError):
        return "out of memory: use a smaller model, batch size or --limit", USER_EXIT
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process: check the files given", USER_EXIT
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return (
        f"internal error {type(exc).__name__}{': ' + text if text else ''} (run again with -v for the "
        "traceback, and please report it)"
    ), BUG_EXIT


def report(exc: BaseException, *, verbose: bool) -> int:
    """Print one line for `exc` (and its traceback with -v); the exit code."""
    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    line, code = describe(exc)
    print(hide_secrets(f"rolebench: error: {line}"), file=sys.stderr)
    return code
