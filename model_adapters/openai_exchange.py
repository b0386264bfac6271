"""The HTTP exchanges of an `openai:` adapter: one attempt at a chat completion within its deadline (an
answer, a per-sample failure, a retry, or a `ModelError` no retry can fix; `model_adapters.openai_api`
says which is which), and what the answers reported: every token and the server's identity."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from model_adapters.errors import ModelError
from model_adapters.interface import Generation, Usage
from model_adapters.openai_http import (
    URL_WHERE,
    ConnectFailed,
    ExchangeFailed,
    HttpSession,
    NameNotResolved,
    parse_retry_after,
    within,
)
from model_adapters.openai_response import Answer, read_answer, read_error, status_kind
from model_adapters.secrets import hide_secrets


class Retry:
    """One failed attempt worth retrying: why, the server's Retry-After, and whether nothing connected."""

    __slots__ = ("reason", "retry_after", "unreachable")

    def __init__(self, reason: str, retry_after: float | None = None, unreachable: bool = False) -> None:
        self.reason, self.retry_after, self.unreachable = reason, retry_after, unreachable


class Exchanges:
    """The attempts of one adapter on its HTTP session, `timeout` seconds each (connect to the last byte);
    `fatal_error` makes the one line for a status no retry can fix."""

    def __init__(
        self, http: HttpSession, timeout: float, where: str, fatal_error: Callable[[int, str], ModelError]
    ) -> None:
        self.http, self.timeout, self.where, self.fatal_error = http, timeout, where, fatal_error
        self.total_usage = Usage()  # every token the server reported, retried attempts included
        self._lock = threading.Lock()
        self._seen: dict[str, str] = {}  # system_fingerprint, served_model
        self._answered = False  # whether any HTTP exchange completed (then a DNS failure is a flake)

    def seen(self) -> dict[str, str]:
        """The server's fingerprint and served model, as the last answers that carried them said."""
        with self._lock:
            return dict(self._seen)

    async def attempt(self, body: bytes, started: float) -> Generation | Retry:
        """One HTTP exchange within the deadline: an answer, a final per-sample failure, or a retry."""
        try:
            status, headers, data = await within(self.timeout, self.http.post(body))
        except NameNotResolved as exc:
            if not self._answered:  # never resolved: a wrong name (or no DNS), not worth 6 retries
                raise ModelError(
                    f"the host name {exc.host} does not resolve ({exc.reason})",
                    where=self.where,
                    fix=f"check the host in the base URL ({URL_WHERE}) and this machine's network",
                ) from None
            return Retry(f"connection failed: {hide_secrets(str(exc))}", unreachable=True)
        except ConnectFailed as exc:
            return Retry(f"connection failed: {hide_secrets(str(exc))}", unreachable=True)
        except ExchangeFailed as exc:
            return Retry(f"connection broken: {hide_secrets(str(exc))}")
        except asyncio.TimeoutError:  # TimeoutError on 3.11+: the whole attempt, connect to last byte
            return Retry("timed out")
        self._answered = True
        if 200 <= status < 300:
            answer = read_answer(data)
            self._record(answer)
            if answer.text is None:
                return Retry(hide_secrets(answer.error or "no answer"))
            return Generation(
                text=hide_secrets(answer.text),
                usage=answer.usage,
                seconds=time.perf_counter() - started,
                finish_reason=hide_secrets(answer.finish_reason) if answer.finish_reason else None,
            )
        message, code = read_error(data)
        described = hide_secrets(f"HTTP {status}: {message}")
        kind = status_kind(status, code)
        if kind == "fatal":
            raise self.fatal_error(status, described)
        if kind == "fail":
            return Generation(text=None, error=described, seconds=time.perf_counter() - started)
        return Retry(described, retry_after=parse_retry_after(headers))

    def _record(self, answer: Answer) -> None:
        """Add the reported tokens to `total_usage`; remember the fingerprint and served model."""
        with self._lock:
            self.total_usage.prompt_tokens += answer.usage.prompt_tokens
            self.total_usage.completion_tokens += answer.usage.completion_tokens
            for name, value in (
                ("system_fingerprint", answer.system_fingerprint),
                ("served_model", answer.served_model),
            ):
                if value and value != self._seen.get(name):
                    self._seen[name] = hide_secrets(value)  # a server may echo the key anywhere
