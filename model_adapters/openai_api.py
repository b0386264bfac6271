"""`openai:MODEL[@BASE_URL]`: any OpenAI-compatible chat-completions endpoint.

OpenAI itself, vLLM, llama.cpp (`python -m llama_cpp.server`), TGI, Ollama, LM Studio...: the
official `openai` SDK talks to all of them. Options (`load_model(spec, **options)`; None = default):

- `base_url`: the endpoint (default https://api.openai.com/v1), or in the spec after `@`. A trailing
  `/chat/completions` is dropped and a bare `http://host:port` gets `/v1`; user info or a query
  string is refused (credentials belong in the environment).
- `api_key_env`: the environment variable holding the key (default `OPENAI_API_KEY`). The key is
  read from the environment only, sent only as the Authorization header, never logged, never put
  in `info()` or any message (a server that echoes it back is redacted). A server on localhost
  needs no key: the placeholder `EMPTY` is sent when the variable is unset.
- `timeout`: seconds per HTTP request (120); `max_retries` (6); `backoff`: the first retry wait in
  seconds (1, doubled each retry); `max_backoff`: the cap on any wait (60).

Concurrency is `GenerationConfig.concurrency`: one `AsyncOpenAI` client on an event loop in a
background thread keeps that many requests in flight, and `generate` yields each result as it
completes, so the runner stores it at once.

Retries are ours (the SDK's are off): HTTP 408, 409, 429 and 5xx, connection errors and timeouts
are retried with exponential back-off and "equal jitter" (a wait in [b/2, b], b = backoff * 2**n),
or the server's `Retry-After` / `retry-after-ms` (seconds or an HTTP date) when that is longer;
every wait is capped at `max_backoff`.

Failures, decided per kind:
- 401, 403, 404 (or `model_not_found`): no request can succeed, so `generate` raises one
  `ModelError` line naming the model and base URL, at once, without retries.
- The server still unreachable after all retries (connection refused, DNS): `ModelError` too.
- 429/5xx/timeouts still failing after all retries, or another 4xx (e.g. a prompt over the
  context length): that sample alone gets `Generation(text=None, error=...)`; the others carry on,
  every success is stored as it arrives, and a rerun of the same command retries only the failures.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import logging
import queue
import random
import threading
import time
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from model_adapters.errors import ConfigError, MissingDependency, ModelError
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request, Usage
from model_adapters.options import AdapterOptions
from model_adapters.secrets import hide_secrets, secret_from_env
from model_adapters.spec import ModelSpec

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PLACEHOLDER_KEY = "EMPTY"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
RETRY_STATUSES = (408, 409, 429)
FATAL_STATUSES = (401, 403, 404)
URL_WHERE = "--base-url / openai:MODEL@BASE_URL"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a request."""

    max_retries: int = 6
    backoff: float = 1.0
    max_backoff: float = 60.0

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        rng: random.Random | None = None,
    ) -> float:
        """Seconds to wait after failed attempt number `attempt` (0-based)."""
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        jittered = ceiling * (0.5 + (rng or random).random() / 2)
        if retry_after is not None:
            jittered = max(jittered, retry_after)
        return float(min(self.max_backoff, jittered))


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, or `retry-after` (seconds or HTTP date)."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / scale)
            except ValueError:
                pass
    value = headers.get("retry-after")
    try:
        when = email.utils.parsedate_to_datetime(value or "")
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def normalize_base_url(url: str) -> str:
    """Strip a trailing slash and `/chat/completions`; give a bare `scheme://host[:port]` the `/v1` path."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        shown = url if "@" not in url else "<hidden: has user info>"
        raise ConfigError(
            f"base URL {shown!r} is not an http(s) URL",
            where=URL_WHERE,
            fix="write it like http://127.0.0.1:8000/v1",
        )
    if parts.username or parts.password or parts.query:
        raise ConfigError(
            f"base URL {public_url(url)} carries user info or a query string",
            where=URL_WHERE,
            fix="drop them: the key comes from the environment (api_key_env, OPENAI_API_KEY)",
        )
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    return urlunsplit((parts.scheme, parts.netloc, path or "/v1", "", ""))


def public_url(url: str) -> str:
    """The URL without user info or query string (either may carry a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, host + (f":{parts.port}" if parts.port else ""), parts.path, "", ""))


def is_local(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in LOCAL_HOSTS or host.startswith("127.")


class OpenAIOptions(AdapterOptions):
    """Options of `openai:` specs; all of them are transport settings (none changes an answer)."""

    transport: ClassVar[frozenset[str]] = frozenset(
        {"base_url", "api_key_env", "timeout", "max_retries", "backoff", "max_backoff"}
    )

    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    timeout: float = Field(120.0, gt=0, allow_inf_nan=False)
    max_retries: int = Field(6, ge=0)
    backoff: float = Field(1.0, ge=0, allow_inf_nan=False)
    max_backoff: float = Field(60.0, ge=0, allow_inf_nan=False)


def request_params(config: GenerationConfig) -> dict[str, Any]:
    """GenerationConfig -> chat-completion request fields."""
    return {
        "max_tokens": config.max_new_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "seed": config.seed,
    }


class _LoopThread:
    """An asyncio event loop in a daemon thread, alive as long as the adapter (one client, one pool)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="openai-loop", daemon=True)
        self.thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


class OpenAIAdapter(AdapterBase):
    """Chat completions from an OpenAI-compatible server: concurrent, with our own retries."""

    Options: ClassVar[type[AdapterOptions]] = OpenAIOptions

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
        self.api_key_env, self.timeout, self.retry = api_key_env, timeout, retry or RetryPolicy()
        self.total_usage = Usage()
        self._lock = threading.Lock()
        self._seen: dict[str, str] = {}  # system_fingerprint, served_model
        self._where = f"openai:{model} at {public_url(self.base_url)}"
        self._client = self._make_client(self._read_key())
        self._loop: _LoopThread | None = None

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> OpenAIAdapter:
        spec_url, option_url = spec.base_url, options.base_url
        if spec_url and option_url and normalize_base_url(spec_url) != normalize_base_url(option_url):
            shown = f"{public_url(spec_url)} (spec) and {public_url(option_url)}"
            raise ConfigError(
                f"two base URLs: {shown}", where="--model / --base-url", fix="give the base URL once"
            )
        retry = RetryPolicy(
            max_retries=options.max_retries, backoff=options.backoff, max_backoff=options.max_backoff
        )
        return cls(
            spec.name,
            base_url=spec_url or option_url or DEFAULT_BASE_URL,
            api_key_env=options.api_key_env,
            timeout=options.timeout,
            retry=retry,
            spec=str(spec),
        )

    def _read_key(self) -> str:
        key = secret_from_env(self.api_key_env)
        if key:
            return key
        if is_local(self.base_url):
            return PLACEHOLDER_KEY
        raise ConfigError(
            f"environment variable {self.api_key_env} is not set",
            where=self._where,
            fix=f"export {self.api_key_env}=<key>, or name another one with api_key_env=NAME",
        )

    def _make_client(self, key: str) -> Any:
        try:
            import openai
        except ImportError:
            raise MissingDependency("the openai: model backend", "the openai SDK", "api") from None
        return openai.AsyncOpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0)

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
        if self._loop is None:
            self._loop = _LoopThread()
        results: queue.SimpleQueue[Any] = queue.SimpleQueue()
        sending = self._send_all(requests, request_params(config), config.concurrency, results)
        future = self._loop.submit(sending)
        try:
            for _ in requests:
                item = results.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            future.cancel()  # after an error or when the caller stops early: cancel what is still in flight

    async def _send_all(
        self,
        requests: Sequence[Request],
        params: dict[str, Any],
        concurrency: int,
        results: queue.SimpleQueue[Any],
    ) -> None:
        """Put `(request, generation)` on `results` as each completes, then the first fatal error if any."""
        semaphore, stopped = asyncio.Semaphore(concurrency), asyncio.Event()

        async def send(request: Request) -> None:
            async with semaphore:
                if stopped.is_set():
                    return
                try:
                    results.put((request, await self._complete(request, params)))
                except BaseException:
                    stopped.set()  # requests still waiting for the semaphore are never sent
                    raise

        tasks = [asyncio.ensure_future(send(request)) for request in requests]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            errors = [task.exception() for task in done if not task.cancelled() and task.exception()]
            if errors:
                results.put(errors[0])
        except BaseException as exc:
            results.put(exc)
            raise
        finally:
            for task in tasks:
                task.cancel()

    async def _complete(self, request: Request, params: dict[str, Any]) -> Generation:
        """One request with retries; raises ModelError for what no retry can fix."""
        import openai

        started, attempts = time.perf_counter(), self.retry.max_retries + 1
        body = {"model": self.model, "messages": request.messages, **params}
        for attempt in range(attempts):
            retry_after = None
            try:  # the SDK's documented raw route: same client, auth and errors, no per-call type transform
                response = await self._client.post("/chat/completions", body=body, cast_to=dict)
                return self._generation(response, started)
            except openai.APIStatusError as exc:
                if exc.status_code in FATAL_STATUSES or getattr(exc, "code", None) == "model_not_found":
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
                await asyncio.sleep(wait)
        if failure == "connection error":
            raise ModelError(
                f"cannot reach the server after {attempts} attempts ({failure})",
                where=self._where,
                fix=f"start the server, or fix the base URL ({URL_WHERE})",
            )
        return self._failed(request, f"gave up after {attempts} attempts: {failure}", started)

    def _generation(self, response: Any, started: float) -> Generation:
        """A chat.completion JSON object -> Generation; records usage and the server's identity."""
        if not isinstance(response, dict):
            return Generation(text=None, error="the response is not a chat.completion object")
        counts = response.get("usage") or {}
        usage = Usage(int(counts.get("prompt_tokens") or 0), int(counts.get("completion_tokens") or 0))
        with self._lock:
            self.total_usage.prompt_tokens += usage.prompt_tokens
            self.total_usage.completion_tokens += usage.completion_tokens
            for field, name in (("system_fingerprint", "system_fingerprint"), ("model", "served_model")):
                if isinstance(response.get(field), str) and response[field]:
                    self._seen[name] = response[field]
        choices = response.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        text, finish = (choice.get("message") or {}).get("content"), choice.get("finish_reason")
        if isinstance(text, list):  # content parts
            text = "".join(part.get("text", "") for part in text if isinstance(part, dict))
        error = None if isinstance(text, str) else f"the response has no content (finish_reason={finish})"
        return Generation(
            text=hide_secrets(text) if isinstance(text, str) else None,
            usage=usage,
            error=error,
            seconds=time.perf_counter() - started,
            finish_reason=finish,
        )

    def _failed(self, request: Request, error: str, started: float) -> Generation:
        log.warning("%s: request %s failed: %s", self._where, request.id, error)
        return Generation(text=None, error=error, seconds=time.perf_counter() - started)

    def _describe(self, exc: Any) -> str:
        """`HTTP <status>: <server message>`, shortened and with the key redacted."""
        body = exc.body if isinstance(exc.body, dict) else {}
        message = " ".join(str(body.get("message") or exc.message or "").split())[:200]
        text, key = f"HTTP {exc.status_code}: {message}", self._client.api_key
        if isinstance(key, str) and len(key) >= 4 and key != PLACEHOLDER_KEY:
            text = text.replace(key, "***")
        return text

    def _fatal_error(self, exc: Any) -> ModelError:
        if exc.status_code == 401:
            what, fix = "API key rejected", f"set a valid key in ${self.api_key_env} (or api_key_env=NAME)"
        elif exc.status_code == 403:
            what, fix = "access denied", "check that this key's project or organisation may use this model"
        else:
            what = f"model {self.model!r} not found"
            fix = f"check the model name (GET {public_url(self.base_url)}/models lists them) and the base URL"
        return ModelError(f"{what} ({self._describe(exc)})", where=self._where, fix=fix)

    def close(self) -> None:
        """Close the HTTP connections and stop the event loop thread."""
        if self._loop is not None:
            try:
                self._loop.submit(self._client.close()).result(timeout=10)
            finally:
                self._loop.stop()
                self._loop = None
