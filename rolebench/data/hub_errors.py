"""The one translation of Hugging Face Hub and network failures into one line: what, where, what to do.

Every Hub call of rolebench runs inside `hub_errors(action, where)`: reading RoleBench files and
packaged builds (`rolebench.data.source`, `packaged`), downloading and pushing the dataset
(`rolebench.data.hub`), publishing leaderboards and model cards (`rolebench.leaderboard.publish`).
A failure of huggingface_hub or of the network becomes a `DataError` ("cannot ACTION: revision not
found (hf://datasets/ORG/NAME@REV): check the branch, tag or commit"); anything else (a bug, or a
rolebench error raised inside the block) goes through untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from model_adapters.network import why_offline
from rolebench.errors import DataError, RoleBenchError, first_line

LOGIN = "log in with `hf auth login` or set HF_TOKEN (a token with write access to push)"


@contextmanager
def hub_errors(
    action: str, where: str, *, endpoint: str = "HF_ENDPOINT", local_copy: str | None = None
) -> Iterator[None]:
    """Run a Hub call; its failures as one-line DataErrors (`hub_error`). `action` completes "cannot
    ...", `where` names the repo (hf://...), `endpoint` the option naming the Hub's address, and
    `local_copy` what to do instead when the Hub cannot be used (e.g. point --data-dir at a copy)."""
    try:
        yield
    except Exception as exc:
        error = hub_error(exc, action, where, endpoint=endpoint, local_copy=local_copy)
        if error is None:
            raise
        raise error from None


def hub_error(
    exc: BaseException,
    action: str,
    where: str,
    *,
    endpoint: str = "HF_ENDPOINT",
    local_copy: str | None = None,
) -> DataError | None:
    """The one line for a huggingface_hub or network failure; None for any other exception."""
    from huggingface_hub import constants
    from huggingface_hub import errors as hub

    what = f"cannot {action}"
    if isinstance(exc, RoleBenchError):
        return None
    if isinstance(exc, hub.OfflineModeIsEnabled | hub.LocalEntryNotFoundError):
        reason, fix = _offline(constants.HF_HUB_OFFLINE, endpoint)
        if isinstance(exc, hub.LocalEntryNotFoundError):
            reason += " and the file is not in the local Hub cache"
        return DataError(
            f"{what}: {reason}", where=where, fix=fix + (f", or {local_copy}" if local_copy else "")
        )
    if isinstance(exc, hub.GatedRepoError):
        return DataError(
            f"{what}: the repository is gated",
            where=where,
            fix=f"accept its conditions on the Hub, then {LOGIN}",
        )
    if isinstance(exc, hub.RevisionNotFoundError):
        return DataError(
            f"{what}: revision not found",
            where=where,
            fix="check the branch, tag or commit (the Hub lists them under 'Files and versions')",
        )
    if isinstance(exc, hub.EntryNotFoundError):
        return DataError(
            f"{what}: no such file in the repository",
            where=where,
            fix="check the path and revision; a rolebench build has checksums.json at its root",
        )
    if isinstance(exc, hub.RepositoryNotFoundError):
        return DataError(
            f"{what}: repository not found",
            where=where,
            fix=f"check ORG/NAME and {endpoint}; a private repo needs a token (hf auth login or HF_TOKEN)",
        )
    if isinstance(exc, hub.HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        return DataError(
            f"{what}: the Hub answered HTTP {status}: {first_line(exc)}",
            where=where,
            fix=_http_fix(status, endpoint),
        )
    if isinstance(exc, OSError) or type(exc).__module__.startswith(("httpx", "httpcore")):
        return DataError(
            f"{what}: cannot reach the Hub ({type(exc).__name__}: {first_line(exc)})",
            where=where,
            fix=f"check the network and {endpoint}" + (f", or {local_copy}" if local_copy else ""),
        )
    return None


def _offline(hub_offline: bool, endpoint: str) -> tuple[str, str]:
    """Why the Hub cannot be used (offline mode and why it is on, or no answer) and what to do."""
    reason, fix = why_offline() if hub_offline else ("the Hub cannot be reached", "")
    return reason, fix or f"check the network and {endpoint}"


def _http_fix(status: int | None, endpoint: str) -> str:
    """What to do about an HTTP error status of the Hub."""
    if status in (401, 403):
        return LOGIN
    if isinstance(status, int) and status >= 500:
        return "the Hub is failing: retry later"
    return f"check the repo id and {endpoint}"
