"""`openai:MODEL[@BASE_URL]`: any OpenAI-compatible chat-completions endpoint, over aiohttp.

OpenAI itself, vLLM, llama.cpp (`python -m llama_cpp.server`), TGI, Ollama, LM Studio...: one POST
to `BASE_URL/chat/completions` each. Options (`load_model(spec, **options)`; None = default), all
transport settings (none changes an answer, so none enters a cache key) but the base URL, which names
the server (the same model name elsewhere is another model: its URL is in the identity):

- `base_url`: the endpoint (default https://api.openai.com/v1), or in the spec after `@`. A trailing
  `/chat/completions` is dropped and a bare `http://host:port` gets `/v1`; user info or a query
  string is refused (credentials belong in the environment). Proxies come from HTTP_PROXY /
  HTTPS_PROXY / ALL_PROXY / NO_PROXY, read once when the adapter is built.
- `api_key_env`: the environment variable holding the key (default `OPENAI_API_KEY`). The key is
  read with `secret_from_env` (so every written text hides it), sent only in the Authorization
  header, and never put in `info()`, a message or a log; an answer, error or server identity that
  echoes it back has it replaced by `***`. A server on localhost needs no key (`EMPTY` is sent).
- `timeout`: seconds for a whole attempt, connect to the last byte of the body (120): a server that
  drips its answer fails the attempt at the deadline. `max_retries` (6); `backoff`: the first retry
  wait in seconds (1, doubled each retry); `max_backoff`: the cap on any wait (60).

Concurrency is `GenerationConfig.concurrency`: that many worker coroutines on an event loop in a
background thread pull the requests from one queue, and `generate` yields each result as it
completes, so the runner stores it at once.

Retries: HTTP 408, 409, 429 and 5xx, timeouts, broken connections, and a 200 that is no usable
answer (not JSON, truncated, not a chat.completion, empty or whitespace-only text, a
`content_filter` finish) are retried with exponential back-off and equal jitter, or the server's
`Retry-After` / `retry-after-ms` when longer, every wait capped at `max_backoff`. Then:
- 401, 403, 404 (or `model_not_found`): no request can succeed, so `generate` raises one
  `ModelError` line naming the model and base URL, at once, without retries.
- A host name that does not resolve (DNS), before the server ever answered: `ModelError` at once,
  naming the host (waiting does not make a name exist; after an answer it is retried as a flake).
- The server still unreachable after all retries (refused, TLS, DNS flakes): `ModelError` too.
- Anything else still failing after all retries, or another 4xx (e.g. a prompt over the context
  length): that sample alone gets `Generation(text=None, error=...)` (failed: never stored, so a
  rerun retries only it); the others carry on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from pydantic import Field

from model_adapters.errors import ModelError, first_line
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request, Usage
from model_adapters.network import reachable
from model_adapters.openai_exchange import Exchanges, Retry
from model_adapters.openai_http import (
    DEFAULT_BASE_URL,
    DEFAULT_KEY_ENV,
    URL_WHERE,
    HttpSession,
    RetryPolicy,
    choose_base_url,
    encode_json,
    is_local,
    normalize_base_url,
    parse_retry_after,
    public_url,
    read_api_key,
)
from model_adapters.openai_loop import LoopThread, stream
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

__all__ = ["OpenAIAdapter", "OpenAIOptions", "RetryPolicy", "parse_retry_after", "request_params"]

log = logging.getLogger(__name__)


class OpenAIOptions(AdapterOptions):
    """Options of `openai:` specs: transport settings (none changes an answer) but `base_url`, which
    names the server, and so enters the model's identity through `OpenAIAdapter.fingerprint`."""

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
    """GenerationConfig -> chat-completion request fields. A repetition penalty is sent only when set: it
    is not an OpenAI field, but vLLM, llama.cpp and SGLang servers honour `repetition_penalty`."""
    params: dict[str, Any] = {
        "max_tokens": config.max_new_tokens,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "seed": config.seed,
    }
    if config.repetition_penalty != 1.0:
        params["repetition_penalty"] = config.repetition_penalty
    return params


class OpenAIAdapter(AdapterBase):
    """Chat completions from an OpenAI-compatible server: concurrent, deadlined, retried, key-safe."""

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
        self._lock = threading.Lock()
        self._where = f"openai:{model} at {public_url(self.base_url)}"
        http = HttpSession(self.base_url, read_api_key(self.api_key_env, self.base_url, self._where))
        self._exchanges = Exchanges(http, timeout, self._where, self._fatal_error)
        self._loop: LoopThread | None = None

    @property
    def total_usage(self) -> Usage:
        """Every token the server reported, retried attempts included."""
        return self._exchanges.total_usage

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: Any) -> OpenAIAdapter:
        """`openai:MODEL[@BASE_URL]` and its options; the base URL given once (spec or option)."""
        retry = RetryPolicy(
            max_retries=options.max_retries, backoff=options.backoff, max_backoff=options.max_backoff
        )
        return cls(
            spec.name,
            base_url=choose_base_url(spec.base_url, options.base_url),
            api_key_env=options.api_key_env,
            timeout=options.timeout,
            retry=retry,
            spec=str(spec),
        )

    @classmethod
    def fingerprint(cls, spec: ModelSpec, options: Any) -> dict[str, Any]:
        """The server that answers, when it is not OpenAI's own: the same model name behind another URL is
        another model (another server, weights, template or quantization), so its answers are its own. The
        URL is normalised (a trailing `/` or `/chat/completions` is the same server); OpenAI's default
        URL, given or not, adds nothing (the identity such a model always had)."""
        url = choose_base_url(spec.base_url, options.base_url)
        return {} if url == DEFAULT_BASE_URL else {"endpoint": public_url(url)}

    @classmethod
    def preflight(cls, spec: ModelSpec, options: Any) -> None:
        """Before any work: the API key (as the adapter reads it), and a local server's answer.

        A server on this machine (127.0.0.1, localhost) must accept a connection within a few seconds;
        a remote one is not contacted (that costs nothing: its first request says the same)."""
        base_url = choose_base_url(spec.base_url, options.base_url)
        where = f"openai:{spec.name} at {public_url(base_url)}"
        read_api_key(options.api_key_env, base_url, where)
        if is_local(base_url) and not reachable(base_url):
            raise ModelError(
                f"nothing answers at {public_url(base_url)}",
                where=where,
                fix=f"start the server first, or fix the base URL ({URL_WHERE})",
            )

    def info(self) -> dict[str, Any]:
        """Name, base URL (no credentials) and, once a response carried them, fingerprint and served model."""
        seen = self._exchanges.seen()
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
        with self._lock:
            if self._loop is None:
                self._loop = LoopThread()
            loop = self._loop
        params = request_params(config)
        yield from stream(loop, requests, config.concurrency, lambda r: self._complete(r, params))

    async def _complete(self, request: Request, params: dict[str, Any]) -> Generation:
        """One request, retried as the policy says; raises ModelError for what no retry can fix."""
        started, attempts = time.perf_counter(), self.retry.max_retries + 1
        seed = params["seed"] if request.seed is None or params["temperature"] <= 0 else request.seed
        body = encode_json({"model": self.model, "messages": request.messages, **params, "seed": seed})
        retry = Retry("not sent")
        for attempt in range(attempts):
            outcome = await self._exchanges.attempt(body, started)
            if isinstance(outcome, Generation):
                if outcome.error:
                    log.warning("%s: request %s failed: %s", self._where, request.id, outcome.error)
                return outcome
            retry = outcome
            if attempt + 1 < attempts:
                wait = self.retry.delay(attempt, retry.retry_after)
                log.warning(
                    "%s: request %s failed (%s); retry %d/%d in %.1fs",
                    self._where,
                    request.id,
                    retry.reason,
                    attempt + 1,
                    self.retry.max_retries,
                    wait,
                )
                await asyncio.sleep(wait)
        if retry.unreachable:
            raise ModelError(
                f"cannot reach the server after {attempts} attempts ({retry.reason})",
                where=self._where,
                fix=f"start the server, or fix the base URL ({URL_WHERE})",
            )
        error = f"gave up after {attempts} attempts: {retry.reason}"
        log.warning("%s: request %s failed: %s", self._where, request.id, error)
        return Generation(text=None, error=error, seconds=time.perf_counter() - started)

    def _fatal_error(self, status: int, described: str) -> ModelError:
        """The one line for a status no retry can fix: what, where (model and URL), how to fix it."""
        if status == 401:
            what, fix = "API key rejected", f"set a valid key in ${self.api_key_env} (or api_key_env=NAME)"
        elif status == 403:
            what, fix = "access denied", "check that this key's project or organisation may use this model"
        else:
            what = f"model {self.model!r} not found"
            fix = f"check the model name (GET {public_url(self.base_url)}/models lists them) and the base URL"
        return ModelError(f"{what} ({described})", where=self._where, fix=fix)

    def close(self) -> None:
        """Close the HTTP connections and stop the event loop thread."""
        if self._loop is not None:
            try:
                self._loop.submit(self._exchanges.http.close()).result(timeout=10)
            except Exception as exc:  # closing is best effort: never hide the caller's own error
                log.debug("%s: closing the HTTP session failed: %s", self._where, first_line(exc))
            finally:
                self._loop.stop()
                self._loop = None
