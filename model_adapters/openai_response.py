"""Reading what an OpenAI-compatible server answered: a usable answer, or why there is none.

`read_answer` turns a 200 body into an `Answer`; anything that is not a usable answer gets an
`error`, and every such error is worth a retry: a body that is not JSON or not a chat.completion
(a proxy's HTML page, a truncated write), an empty or whitespace-only answer, an answer withheld
by the content filter. A `length` finish with text is a normal (cut) answer. `read_error` and
`status_kind` decide what a non-200 status means. Nothing here raises on hostile input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from model_adapters.interface import Usage

RETRY_STATUSES = (408, 409, 429)
FATAL_STATUSES = (401, 403, 404)
FATAL_CODES = ("model_not_found",)
StatusKind = Literal["fatal", "retry", "fail"]


@dataclass(frozen=True)
class Answer:
    """One chat.completion as read: the text (None when unusable, see `error`) and what it reports."""

    text: str | None
    finish_reason: str | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    system_fingerprint: str | None = None
    served_model: str | None = None


def _count(value: Any) -> int:
    """A token count from JSON; 0 for anything that is not a non-negative number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return 0
    return int(value) if value < 2**62 else 0


def _string(value: Any) -> str | None:
    """A non-empty JSON string, else None (servers send null, empty strings or numbers here)."""
    return value if isinstance(value, str) and value else None


def _content(message: dict[str, Any]) -> str | None:
    """The message's text: a string, or the text parts of a list of content parts joined."""
    content = message.get("content")
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return content if isinstance(content, str) else None


def _shown(data: bytes) -> str:
    """The start of a body, for an error message."""
    return repr(data[:80]) + ("..." if len(data) > 80 else "")


def read_answer(data: bytes) -> Answer:
    """A 200 body -> the answer, or an Answer with text None and the reason in `error`."""
    try:
        response = json.loads(data)
    except ValueError:  # UnicodeDecodeError included
        return Answer(None, error=f"HTTP 200 with a body that is not JSON: {_shown(data)}")
    if not isinstance(response, dict):
        return Answer(None, error=f"HTTP 200 with a body that is not a chat.completion: {_shown(data)}")
    if "choices" not in response and "error" in response:  # some servers say 200 with an error body
        return Answer(None, error="HTTP 200 with an error: " + read_error(data)[0])
    choices = response.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        return Answer(None, error=f"HTTP 200 with a body that is not a chat.completion: {_shown(data)}")
    counts = response.get("usage")
    counts = counts if isinstance(counts, dict) else {}
    usage = Usage(_count(counts.get("prompt_tokens")), _count(counts.get("completion_tokens")))
    finish = _string(choice.get("finish_reason"))
    text, error = _content(message), None
    if text is None or not text.strip():
        what = "no content" if not text else "only whitespace"
        text, error = None, f"the response has {what} (finish_reason={finish})"
    elif finish == "content_filter":
        text, error = (
            None,
            "the answer was withheld by the server's content filter (finish_reason=content_filter)",
        )
    return Answer(
        text,
        finish_reason=finish,
        error=error,
        usage=usage,
        system_fingerprint=_string(response.get("system_fingerprint")),
        served_model=_string(response.get("model")),
    )


def read_error(data: bytes) -> tuple[str, str | None]:
    """An error body -> (message, code): OpenAI's `{"error": {"message", "code"}}`, or the body's text."""
    try:
        parsed = json.loads(data)
    except ValueError:
        parsed = data[:200].decode("utf-8", "replace")
    inner = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(inner, dict):
        message, code = inner.get("message") or inner.get("detail") or "", inner.get("code")
    else:
        message, code = inner, None
    message = " ".join(str(message).split())[:200]
    return message, code if isinstance(code, str) else None


def status_kind(status: int, code: str | None) -> StatusKind:
    """What a non-200 status means: `fatal` (no request can succeed: stop the run), `retry` (a
    passing condition: 408/409/429/5xx), or `fail` (this request alone is refused, e.g. too long)."""
    if status in FATAL_STATUSES or code in FATAL_CODES:
        return "fatal"
    if status in RETRY_STATUSES or status >= 500:
        return "retry"
    return "fail"
