"""`openai:MODEL[@BASE_URL]`: any OpenAI-compatible chat-completions endpoint.

OpenAI itself, vLLM, llama.cpp (`python -m llama_cpp.server`), TGI, Ollama, LM Studio...: the
official `openai` SDK talks to all of them. Options (`load_model(spec, **options)`; None = default):

- `base_url`: the endpoint (default https://api.openai.com/v1); also accepted in the spec after `@`.
  A trailing `/chat/completions` is dropped, and a bare `http://host:port` gets `/v1`.
- `api_key_env`: the environment variable holding the key (default `OPENAI_API_KEY`). The key is
  read from the environment only, sent only as the Authorization header, never logged, never put
  in `info()` or any message (a server that echoes it back is redacted). A server on localhost
  needs no key: the placeholder `EMPTY` is sent when the variable is unset.
- `timeout`: seconds per HTTP request (default 120); `max_retries` (default 6); `backoff`: first
  retry wait in seconds (default 1, doubled each retry); `max_backoff`: the cap on any wait (60).

Concurrency is `GenerationConfig.concurrency`: that many requests in flight (a thread pool over one
sync client, which is thread-safe), and results are yielded as they complete.

Retries are ours (the SDK's are off): HTTP 408, 409, 429 and 5xx, connection errors and timeouts
are retried with exponential back-off and "equal jitter" (wait in [b/2, b], b = backoff * 2**n,
capped), or the server's `Retry-After` / `retry-after-ms` (seconds or an HTTP date) when it is
longer, also capped at `max_backoff`.

Failures, decided per kind:
- 401, 403, 404 (or `model_not_found`): the run cannot work at all, so `generate` raises one
  `ModelError` line naming the model and base URL, at once, without retries.
- The server unreachable after all retries (connection refused, DNS): `ModelError` too.
- 429/5xx/timeouts still failing after all retries, or another 4xx (e.g. a prompt over the
  context length): that sample alone gets `Generation(text=None, error=...)`; the others carry on
  and every success is stored as it arrives, so a rerun retries only the failures.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rolebench.errors import ConfigError, MissingDependency, ModelError

from .base import Generation, GenerationConfig, Request, Usage

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PLACEHOLDER_KEY = "EMPTY"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
RETRY_STATUSES = (408, 409, 429)
FATAL_STATUSES = (401, 403, 404)
OPTIONS = ("base_url", "api_key_env", "timeout", "max_retries", "backoff", "max_backoff")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a request."""

    max_retries: int = 6
    backoff: float = 1.0
    max_backoff: float = 60.0

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait after failed attempt number `attempt` (0-based)."""
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        jittered = ceiling * (0.5 + (rng or random).random() / 2)
        if retry_after is not None:
            jittered = max(jittered, retry_after)
        return min(self.max_backoff, jittered)


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, or `retry-after` (seconds or HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def normalize_base_url(url: str) -> str:
    """Strip a trailing slash and `/chat/completions`; give a bare `scheme://host[:port]` the `/v1` path."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"base URL {url if '@' not in url else '<hidden: has user info>'!r} is not an http(s) URL",
            where="--base-url / openai:MODEL@BASE_URL",
            fix="write it like http://127.0.0.1:8000/v1",
        )
    if parts.username or parts.password or parts.query:
        raise ConfigError(
            f"base URL {public_url(url)} carries user info or a query string",
            where="--base-url / openai:MODEL@BASE_URL",
            fix="drop them: the key is read from the environment (api_key_env, default OPENAI_API_KEY)",
        )
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    return urlunsplit((parts.scheme, parts.netloc, path or "/v1", "", ""))


def public_url(url: str) -> str:
    """The URL without user info or query string (either may carry a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def is_local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in LOCAL_HOSTS or host.startswith("127.")


def split_spec(rest: str) -> tuple[str, str | None]:
    """`MODEL[@BASE_URL]` -> (model, base_url or None)."""
    model, sep, url = rest.partition("@")
    if not model or (sep and not url):
        raise ConfigError(
            f"bad OpenAI model spec openai:{rest}",
            where="--model",
            fix="write openai:MODEL or openai:MODEL@BASE_URL",
        )
    return model, (url or None)


def _number(options: dict[str, Any], name: str, kind: type, minimum: float, default: float) -> Any:
    value = options.get(name)
    if value is None:
        return kind(default)
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number < minimum:
        raise ConfigError(
            f"option {name}={value!r} is not a {kind.__name__} >= {minimum}",
            where="openai model options",
            fix=f"pass {name}={kind(default)!r} or similar",
        )
    return number


class OpenAIAdapter:
    """Chat completions from an OpenAI-compatible server, concurrent, with our own retries."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str = DEFAULT_KEY_ENV,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        spec: str | None = None,
    ) -> None:
        self.model = model
        self.base_url = normalize_base_url(base_url)
        self.spec = spec or f"openai:{model}"
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.total_usage = Usage()
        self._lock = threading.Lock()
        self._seen: dict[str, str] = {}  # system_fingerprint, served model
        self._where = f"openai:{model} at {public_url(self.base_url)}"
        self._client = self._make_client(self._read_key())

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> OpenAIAdapter:
        options = {k: v for k, v in options.items() if v is not None}
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ConfigError(
                f"unknown option(s) {', '.join(unknown)} for openai:{rest}",
                where="openai model options",
                fix="known options: " + ", ".join(OPTIONS),
            )
        model, spec_url = split_spec(rest)
        base_url = options.get("base_url")
        if spec_url and base_url and normalize_base_url(spec_url) != normalize_base_url(str(base_url)):
            raise ConfigError(
                f"two base URLs: {public_url(spec_url)} (spec) and {public_url(str(base_url))} (--base-url)",
                where="--model / --base-url",
                fix="give the base URL once",
            )
        retry = RetryPolicy(
            max_retries=_number(options, "max_retries", int, 0, RetryPolicy.max_retries),
            backoff=_number(options, "backoff", float, 0, RetryPolicy.backoff),
            max_backoff=_number(options, "max_backoff", float, 0, RetryPolicy.max_backoff),
        )
        return cls(
            model,
            base_url=spec_url or str(base_url or DEFAULT_BASE_URL),
            api_key_env=str(options.get("api_key_env") or DEFAULT_KEY_ENV),
            timeout=_number(options, "timeout", float, 0.001, 120.0),
            retry=retry,
            spec=f"openai:{rest}",
        )

    def _read_key(self) -> str:
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            return key
        if is_local(self.base_url):
            return PLACEHOLDER_KEY
        raise ConfigError(
            f"environment variable {self.api_key_env} is not set",
            where=self._where,
            fix=f"export {self.api_key_env}=<your key>, or name another variable with api_key_env=NAME",
        )

    def _make_client(self, key: str) -> Any:
        try:
            import openai
        except ImportError:
            raise MissingDependency("the openai: model backend", "the openai SDK", "api") from None
        return openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

    def info(self) -> dict[str, Any]:
        """Name, base URL (no credentials) and, once a response carried one, the system fingerprint."""
        with self._lock:
            seen = dict(self._seen)
        info: dict[str, Any] = {
            "name": self.model,
            "revision": seen.get("system_fingerprint"),
            "base_url": public_url(self.base_url),
            "api": "openai-chat-completions",
        }
        if "served_model" in seen:
            info["served_model"] = seen["served_model"]
        return info

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        """Send every request, `config.concurrency` at a time; yield each answer as it completes."""
        if not requests:
            return
        if config.concurrency < 1:
            raise ConfigError(
                f"concurrency {config.concurrency} is below 1", where="--concurrency", fix="use 1 or more"
            )
        params = request_params(config)
        stop = threading.Event()
        workers = min(config.concurrency, len(requests))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai-request")
        try:
            futures = {pool.submit(self._complete, request, params, stop): request for request in requests}
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)

    def _complete(self, request: Request, params: dict[str, Any], stop: threading.Event) -> Generation:
        """One request with retries; raises ModelError for what no retry can fix."""
        import openai

        started = time.perf_counter()
        attempts = self.retry.max_retries + 1
        for attempt in range(attempts):
            if stop.is_set():
                return Generation(text=None, error="cancelled", seconds=time.perf_counter() - started)
            retry_after = None
            try:
                response = self._client.chat.completions.create(
                    model=self.model, messages=request.messages, **params
                )
                return self._generation(response, started)
            except openai.APIStatusError as exc:
                if self._is_fatal(exc):
                    stop.set()
                    raise self._fatal_error(exc) from None
                if not (exc.status_code in RETRY_STATUSES or exc.status_code >= 500):
                    return self._failed(request, self._describe(exc), started)
                failure, retry_after = self._describe(exc), parse_retry_after(exc.response.headers)
            except openai.APIConnectionError as exc:  # APITimeoutError included
                failure = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection error"
            if attempt + 1 < attempts:
                wait = self.retry.delay(attempt, retry_after)
                log.warning(
                    "%s: request %s failed (%s); retry %d/%d in %.1fs",
                    self._where,
                    request.id,
                    failure,
                    attempt + 1,
                    self.retry.max_retries,
                    wait,
                )
                if stop.wait(wait):
                    return Generation(text=None, error="cancelled", seconds=time.perf_counter() - started)
        if failure == "connection error":
            stop.set()
            raise ModelError(
                f"cannot reach the server after {attempts} attempts ({failure})",
                where=self._where,
                fix="start the server, or fix the base URL (--base-url / openai:MODEL@BASE_URL)",
            )
        return self._failed(request, f"gave up after {attempts} attempts: {failure}", started)

    def _generation(self, response: Any, started: float) -> Generation:
        usage = Usage()
        if response.usage is not None:
            usage = Usage(response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0)
        with self._lock:
            self.total_usage.prompt_tokens += usage.prompt_tokens
            self.total_usage.completion_tokens += usage.completion_tokens
            if getattr(response, "system_fingerprint", None):
                self._seen["system_fingerprint"] = response.system_fingerprint
            if getattr(response, "model", None):
                self._seen["served_model"] = response.model
        choice = response.choices[0] if response.choices else None
        text = choice.message.content if choice is not None else None
        finish = choice.finish_reason if choice is not None else None
        error = None if text is not None else f"the response has no message content (finish_reason={finish})"
        return Generation(
            text=text, usage=usage, seconds=time.perf_counter() - started, error=error, finish_reason=finish
        )

    def _failed(self, request: Request, error: str, started: float) -> Generation:
        log.warning("%s: request %s failed: %s", self._where, request.id, error)
        return Generation(text=None, error=error, seconds=time.perf_counter() - started)

    def _is_fatal(self, exc: Any) -> bool:
        return exc.status_code in FATAL_STATUSES or getattr(exc, "code", None) == "model_not_found"

    def _describe(self, exc: Any) -> str:
        """`HTTP <status>: <server message>`, shortened and with the key redacted."""
        body = exc.body if isinstance(exc.body, dict) else {}
        message = str(body.get("message") or exc.message or "")
        return self._redact(f"HTTP {exc.status_code}: {' '.join(message.split())[:200]}")

    def _fatal_error(self, exc: Any) -> ModelError:
        status = exc.status_code
        if status == 401:
            what, fix = "API key rejected", f"set a valid key in ${self.api_key_env} (or api_key_env=NAME)"
        elif status == 403:
            what, fix = "access denied", "check that this key's project or organisation may use this model"
        else:
            what = f"model {self.model!r} not found"
            fix = f"check the model name (GET {public_url(self.base_url)}/models lists them) and the base URL"
        return ModelError(f"{what} ({self._describe(exc)})", where=self._where, fix=fix)

    def _redact(self, text: str) -> str:
        key = self._client.api_key
        if isinstance(key, str) and len(key) >= 4 and key != PLACEHOLDER_KEY:
            text = text.replace(key, "***")
        return text

    def close(self) -> None:
        self._client.close()


def request_params(config: GenerationConfig) -> dict[str, Any]:
    """GenerationConfig -> chat.completions.create keyword arguments."""
    return {
        "max_tokens": config.max_new_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "seed": config.seed,
    }
