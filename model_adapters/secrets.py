"""Secrets are hidden by value: each API key or token is registered where it is read, and every text that
could be written (an answer, an error, a results or samples file, a store record, an error line) has
the registered values replaced by `***`. Nothing else in any text is ever rewritten.

A value shorter than `MIN_LENGTH` is not registered (a placeholder such as `EMPTY` is no secret, and
hiding a short common string would rewrite ordinary text).
"""

from __future__ import annotations

import os
import threading

MIN_LENGTH = 8
MASK = "***"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()


def register_secret(value: str | None) -> None:
    """Hide `value` from everything written from now on in this process."""
    if value and len(value.strip()) >= MIN_LENGTH:
        with _LOCK:
            _SECRETS.add(value.strip())


def secret_from_env(name: str) -> str | None:
    """The value of an environment variable holding a secret, registered; None when unset or blank."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    register_secret(value)
    return value


def hide_secrets(text: str) -> str:
    """`text` with every registered secret replaced by `***` (longest first)."""
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text
