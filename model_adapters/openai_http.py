"""HTTP plumbing of the `openai:` adapter: base URLs, retry timing, the deadline, one aiohttp session.

Why aiohttp and not the openai SDK: the SDK (on httpx) costs about 3 ms of CPU per request, so a
run at concurrency 64 is bound by the client's CPU, and its `timeout` is per read, so a server that
drips one byte a second holds a request for as long as it drips. aiohttp costs 0.5 to 0.8 ms (what
lm-eval's API models use), and `within()` puts one deadline around connect, headers and body.

Where the key comes from (`read_api_key`: the environment, never an option or a URL) and which base
URL a spec names (`choose_base_url`) are here too, so that loading and `preflight` read them alike.

`HttpSession.post` does only the HTTP exchange and says how it failed: `ConnectFailed` (no
connection: refused, TLS handshake, proxy; `NameNotResolved` when the host name does not resolve)
or `ExchangeFailed` (it broke after connecting:
reset, closed early, truncated or unparsable, over `MAX_BODY`). The adapter owns retries, parsing
and the error policy.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import socket
import sys
import urllib.request
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from model_adapters.errors import ConfigError, MissingDependency
from model_adapters.secrets import secret_from_env

if TYPE_CHECKING:
    import aiohttp

T = TypeVar("T")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PLACEHOLDER_KEY = "EMPTY"  # sent to a server on this machine when no key is set
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")
URL_WHERE = "--base-url / openai:MODEL@BASE_URL"
MAX_BODY = 32 * 1024 * 1024  # bytes: a chat completion is kilobytes; more is a broken or hostile server


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
        """Seconds to wait after failed attempt number `attempt` (0-based): equal jitter in [b/2, b],
        b = backoff * 2**attempt, or the server's longer `retry_after`; never above `max_backoff`."""
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
                seconds = float(value) / scale
            except ValueError:
                continue
            if seconds == seconds:  # not NaN
                return max(0.0, seconds)
    value = headers.get("retry-after")
    try:
        when = email.utils.parsedate_to_datetime(value or "")
    except (TypeError, ValueError, IndexError):
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


def choose_base_url(spec_url: str | None, option_url: str | None) -> str:
    """The base URL, given once (in the spec or as the `base_url` option), normalised; else the default."""
    if spec_url and option_url and normalize_base_url(spec_url) != normalize_base_url(option_url):
        shown = f"{public_url(spec_url)} (spec) and {public_url(option_url)}"
        raise ConfigError(
            f"two base URLs: {shown}", where="--model / --base-url", fix="give the base URL once"
        )
    return normalize_base_url(spec_url or option_url or DEFAULT_BASE_URL)


def read_api_key(env: str, base_url: str, where: str) -> str:
    """The API key from the environment variable `env`; the placeholder for a server on this machine;
    else one ConfigError (never the key itself in any text)."""
    key = secret_from_env(env)  # registered: hidden from everything written
    if key and not (key.isascii() and key.isprintable()):
        raise ConfigError(
            f"the key in {env} has characters an HTTP header cannot carry",
            where=where,
            fix=f"set {env} to the key alone (no line breaks or control characters)",
        )
    if key:
        return key
    if is_local(base_url):
        return PLACEHOLDER_KEY
    raise ConfigError(
        f"environment variable {env} is not set",
        where=where,
        fix=f"export {env}=<key>, or name another one with api_key_env=NAME",
    )


def public_url(url: str) -> str:
    """The URL without user info or query string (either may carry a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, host + (f":{parts.port}" if parts.port else ""), parts.path, "", ""))


def is_local(url: str) -> bool:
    """Whether the URL's host is this machine (such a server needs no API key)."""
    host = urlsplit(url).hostname or ""
    return host in LOCAL_HOSTS or host.startswith("127.")


def encode_json(body: dict[str, Any]) -> bytes:
    """The request body as compact UTF-8 JSON (ASCII escapes only for text UTF-8 cannot carry)."""
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate: let the server judge the escaped form
        return json.dumps(body, separators=(",", ":")).encode()


async def within(seconds: float, awaitable: Awaitable[T]) -> T:
    """`awaitable`, cancelled with `TimeoutError` after `seconds`, whatever it is waiting for."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)  # pragma: no cover - Python 3.10


def _reason(exc: BaseException) -> str:
    """An aiohttp error as one short line (its parser messages span lines and quote the bytes)."""
    message = getattr(exc, "message", None)  # ClientResponseError: what the HTTP parser said
    text = message if isinstance(message, str) and message else str(exc) or type(exc).__name__
    return " ".join(text.split())[:200]


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, lower-case
    too), or None when there is none or NO_PROXY exempts the host."""
    parts = urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all") or None


class ConnectFailed(Exception):
    """No connection could be made (refused, DNS, TLS handshake, proxy): the server is not there."""


class NameNotResolved(ConnectFailed):
    """The host name does not resolve (DNS): `host` is the name asked for, `reason` the resolver's word."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"cannot resolve {host}: {reason}")
        self.host, self.reason = host, reason


def _dns_failure(exc: BaseException) -> NameNotResolved | None:
    """A NameNotResolved when an aiohttp connection error is the resolver's (aiohttp's
    ClientConnectorDNSError, or a socket.gaierror underneath on aiohttp before 3.10)."""
    cause = getattr(exc, "os_error", None)
    if type(exc).__name__ != "ClientConnectorDNSError" and not isinstance(cause, socket.gaierror):
        return None
    host = str(getattr(exc, "host", "") or "?")
    reason = (getattr(cause, "strerror", None) or str(cause or exc)).strip() or "no address"
    return NameNotResolved(host, " ".join(reason.split())[:200])


class ExchangeFailed(Exception):
    """The connection broke after it was made, or the response could not be read as HTTP."""


class HttpSession:
    """One keep-alive aiohttp session per adapter, opened on the adapter's event loop at first use.

    The key travels only in the Authorization header; this object's repr never shows it. The proxy
    comes from the environment (`env_proxy`), resolved once per session rather than with aiohttp's
    `trust_env=True`, which reads ~/.netrc and the proxy variables on a thread for every request
    (twice our CPU per request) and refuses every request (ValueError) when ~/.netrc has an entry
    for the API's host, since our Authorization header is set too.
    """

    def __init__(self, base_url: str, key: str) -> None:
        try:
            import aiohttp
        except ImportError:
            raise MissingDependency("the openai: model backend", "aiohttp", "api") from None
        self._aiohttp = aiohttp
        self.url = base_url + "/chat/completions"
        self._headers = {
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self._session: aiohttp.ClientSession | None = None
        proxy = env_proxy(self.url)
        if proxy and urlsplit(proxy).scheme not in ("http", "https"):
            raise ConfigError(
                f"the proxy {public_url(proxy)} named by the environment is not an http(s) proxy",
                where="HTTP_PROXY / HTTPS_PROXY / ALL_PROXY",
                fix="name an http:// proxy, or exempt this host with NO_PROXY",
            )
        self._proxy = proxy  # credentials in its URL: aiohttp sends them to the proxy

    def __repr__(self) -> str:
        return f"<HttpSession {public_url(self.url)}>"

    def _open(self) -> aiohttp.ClientSession:
        """The session, made on first use on the running loop (aiohttp binds it to that loop)."""
        aiohttp = self._aiohttp
        # The adapter's `within()` is the one deadline; the workers bound the connections in use.
        self._session = aiohttp.ClientSession(
            headers=self._headers,
            connector=aiohttp.TCPConnector(limit=0),
            timeout=aiohttp.ClientTimeout(total=None),
        )
        return self._session

    async def post(self, body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        """POST `body` as JSON: (status, headers, raw body); ConnectFailed or ExchangeFailed on failure."""
        aiohttp = self._aiohttp
        session = self._session or self._open()
        try:
            async with session.post(self.url, data=body, proxy=self._proxy) as response:
                return response.status, response.headers, await self._read(response)
        except aiohttp.ClientConnectorError as exc:  # refused, DNS, certificate, proxy (subclasses)
            raise _dns_failure(exc) or ConnectFailed(_reason(exc)) from None
        except (aiohttp.ClientError, OSError, ValueError) as exc:  # reset, truncated, not HTTP
            raise ExchangeFailed(f"{type(exc).__name__}: {_reason(exc)}") from None

    @staticmethod
    async def _read(response: aiohttp.ClientResponse) -> bytes:
        """The whole body, refused (ExchangeFailed) past `MAX_BODY` bytes."""
        length = response.content_length
        if length is not None and length <= MAX_BODY:
            return await response.read()
        chunks, size = [], 0
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > MAX_BODY:
                raise ExchangeFailed(f"the response body is over {MAX_BODY} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def close(self) -> None:
        """Close every connection (on the loop that opened them)."""
        if self._session is not None:
            await self._session.close()
            self._session = None
