"""A small, real OpenAI-compatible HTTP server for tests, on 127.0.0.1 and a free port.

It speaks the OpenAI wire format for `POST /v1/chat/completions` and `GET /v1/models`, and a test
decides every answer through a handler, a callable `(request_json) -> reply` where the reply is:

- a `str`: a normal completion with that text;
- an `int`: that HTTP status with an OpenAI-style error body (429 comes with `Retry-After: 0`);
- a `Reply`: full control (status, text, delay, headers, usage, finish reason, a raw JSON body),
  and misbehaviour: raw bytes as the body, a wrong Content-Length (a truncated body), a body
  dripped one byte at a time, bytes that are not HTTP at all, the caller's API key echoed back.

Every request is recorded (thread-safe) with its arrival time, so tests can count calls and check
spacing; `max_in_flight` says how many requests were being handled at once, a timing-free proof
of concurrency. Requests naming a model outside `models` get OpenAI's 404 `model_not_found`.

    with FakeOpenAI(lambda body: Reply(text="hi", delay=0.2)) as server:
        adapter = load_model(f"openai:fake-model@{server.base_url}")
        ...
        assert server.count() == 3

In pytest, the `fake_openai` fixture is a factory of started servers, all stopped at teardown:

    from tests.fake_openai import fake_openai  # in a test module (the fixture), or conftest
    def test_x(fake_openai):
        server = fake_openai(lambda body: Reply.rate_limited(retry_after="1") if ... else "ok")

The `hostile_openai` fixture (it needs `fake_openai` imported too) starts a server that misbehaves
in one of the `HOSTILE` modes (always 500, a dripping or truncated body, a 200 that is not JSON or
not a chat.completion, empty / whitespace-only / content-filtered answers, the key echoed back...)
for its first `bad` requests (None: all of them), then answers `ok: <question>`:

    def test_y(fake_openai, hostile_openai):
        server = hostile_openai("drip", bad=1)  # one dripping answer, then normal ones
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

STATUS_ERRORS = {
    400: ("invalid_request_error", "bad_request", "Bad request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model does not exist or you do not have access to it.",
    ),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached. Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request."),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


@dataclass
class Reply:
    """What the fake server answers to one chat-completion request."""

    text: str | None = "ok"
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); default: word counts
    finish_reason: str = "stop"
    body: dict[str, Any] | None = None  # a raw JSON body, sent as is
    system_fingerprint: str | None = None
    model: str | None = None  # the served model named in the answer (default: the requested one)
    raw: bytes | None = None  # the body's bytes, sent as is with `content_type` (wins over `body`)
    content_type: str = "application/json"
    declared_length: int | None = None  # a Content-Length other than the body's (then the connection closes)
    drip: float = 0.0  # > 0: headers at once, then the body one byte every `drip` seconds
    wire: bytes | None = None  # bytes sent instead of any HTTP response, then the connection closes
    echo_key: bool = False  # the bearer token of the request goes into the text, fingerprint and model

    @classmethod
    def error(cls, status: int, message: str | None = None, **kwargs: Any) -> Reply:
        """An OpenAI-style error body for `status` (401, 404, 429, 500, ...)."""
        kind, code, default = STATUS_ERRORS.get(status, ("api_error", None, f"HTTP {status}."))
        body = {"error": {"message": message or default, "type": kind, "param": None, "code": code}}
        return cls(text=None, status=status, body=body, **kwargs)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "0", **kwargs: Any) -> Reply:
        """429 with a `Retry-After` header (seconds or an HTTP date; None for no header)."""
        headers = {} if retry_after is None else {"Retry-After": retry_after}
        return cls.error(429, headers=headers, **kwargs)


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str  # the path, also when the request came through a proxy (absolute form)
    body: dict[str, Any] | None
    headers: dict[str, str]  # lower-case names
    at: float  # time.monotonic() on arrival
    target: str = ""  # the request target as sent: `http://host/v1/...` when sent to a proxy


Handler = Callable[[dict[str, Any]], "Reply | str | int"]


def echo(body: dict[str, Any]) -> Reply:
    """The default handler: answers `echo: <last user message>`."""
    users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
    return Reply(text="echo: " + (users[-1] if users else ""))


def as_reply(value: Reply | str | int) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply(text=value)
    if isinstance(value, int):
        return Reply.rate_limited() if value == 429 else Reply.error(value)
    raise TypeError(f"handler returned {type(value).__name__}; expected Reply, str or int")


def completion_body(reply: Reply, request: dict[str, Any], number: int) -> dict[str, Any]:
    """The OpenAI chat.completion object for a successful reply."""
    words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    prompt_tokens, completion_tokens = reply.usage or (words, len((reply.text or "").split()))
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or request.get("model", ""),
        "system_fingerprint": reply.system_fingerprint,
        "choices": [
            {
                "index": 0,
                "finish_reason": reply.finish_reason,
                "logprobs": None,
                "message": {"role": "assistant", "content": reply.text},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def echoing(reply: Reply, key: str) -> Reply:
    """`reply` with the caller's API key put into its answer, system fingerprint and served model."""
    return dataclasses.replace(
        reply,
        text=f"{reply.text or ''} (your key is {key})",
        system_fingerprint=f"fp-{key}",
        model=f"m-{key}",
    )


def _truncated_completion() -> Reply:
    whole = json.dumps(completion_body(Reply(text="cut short"), {"model": "fake-model"}, 0)).encode()
    return Reply(raw=whole[:25], declared_length=len(whole))


HOSTILE: dict[str, Callable[[], Reply]] = {
    "500": lambda: Reply.error(500),
    "drip": lambda: Reply(raw=b" " * 1_000_000, drip=1.0),  # a byte a second, for 11 days
    "not_json": lambda: Reply(raw=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
    "truncated": _truncated_completion,  # Content-Length says more than is sent, then the socket closes
    "empty_body": lambda: Reply(raw=b""),
    "not_a_completion": lambda: Reply(raw=b'{"object": "list", "data": [1, 2]}'),
    "error_in_200": lambda: Reply(raw=b'{"error": {"message": "upstream overloaded", "code": null}}'),
    "not_http": lambda: Reply(wire=b"SSH-2.0-OpenSSH_9.6\r\n\x00\xff garbage"),
    "empty": lambda: Reply(text=""),
    "whitespace": lambda: Reply(text=" \n\t  \n"),
    "content_filter": lambda: Reply(text=None, finish_reason="content_filter"),
    "content_filter_partial": lambda: Reply(text="Once upon a", finish_reason="content_filter"),
    "echo_key": lambda: Reply(text="here is", echo_key=True),
}


def hostile(mode: str, bad: int | None = None) -> Callable[[FakeOpenAI], Handler]:
    """A handler (given its server) that answers in `mode` to the first `bad` requests (None: all),
    then `ok: <question>` with fingerprint `fp_good`."""
    make = HOSTILE[mode]

    def bind(server: FakeOpenAI) -> Handler:
        def handler(body: dict[str, Any]) -> Reply:
            if bad is None or server.count() <= bad:
                return make()
            question = body["messages"][-1]["content"]
            return Reply(text=f"ok: {question}", system_fingerprint="fp_good")

        return handler

    return bind


class FakeOpenAI:
    """The server. `handler` and `models` may be changed while it runs."""

    def __init__(
        self, handler: Handler | None = None, models: tuple[str, ...] | None = ("fake-model",)
    ) -> None:
        self.handler: Handler = handler or echo
        self.models = models  # None: every model name is accepted
        self._lock = threading.Lock()
        self._received: list[Received] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._numbers = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------
    def start(self, port: int = 0) -> FakeOpenAI:
        """Listen on 127.0.0.1:`port` (0: a free port) in a background thread."""
        fake = self

        class _Handler(_RequestHandler):
            server_fake = fake

        self._httpd = _QuietServer(("127.0.0.1", port), _Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what tests read -------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAI is not running; call start() or use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. http://127.0.0.1:PORT/v1 (the client appends /chat/completions)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def received(self) -> list[Received]:
        """A copy of every request so far, in arrival order."""
        with self._lock:
            return list(self._received)

    def count(self, path: str | None = "/v1/chat/completions") -> int:
        """How many requests reached `path` (None: all paths)."""
        return sum(1 for r in self.received if path is None or r.path == path)

    def reset(self) -> None:
        with self._lock:
            self._received.clear()
            self.max_in_flight = 0

    # --- used by the request handler -------------------------------------------------------
    def _record(self, received: Received) -> int:
        with self._lock:
            self._received.append(received)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return next(self._numbers)

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _reply_to(self, body: dict[str, Any]) -> Reply:
        model = body.get("model")
        if self.models is not None and model not in self.models:
            return Reply.error(404, f"The model `{model}` does not exist or you do not have access to it.")
        return as_reply(self.handler(body))


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # socketserver's 5 refuses part of a burst of new connections

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a timeout test) is expected; anything else is still printed."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    server_fake: FakeOpenAI
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
        return None

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_bytes(self, reply: Reply, data: bytes) -> None:
        """`data` as the body of `reply.status`: maybe announced with a wrong length, maybe dripped."""
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        length = len(data) if reply.declared_length is None else reply.declared_length
        self.send_header("Content-Length", str(length))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if reply.drip > 0:
            self.close_connection = True
            for byte in data:  # until the client hangs up (BrokenPipeError, quietly) or it is all sent
                time.sleep(reply.drip)
                self.wfile.write(bytes([byte]))
        else:
            self.wfile.write(data)
        if length != len(data):
            self.close_connection = True

    def _header_dict(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _path(self) -> str:
        """The path of the request target (a proxy receives `http://host:port/path`)."""
        return urlsplit(self.path).path if "://" in self.path else self.path

    def _read_json(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return None

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        fake = self.server_fake
        fake._record(Received("GET", self._path(), None, self._header_dict(), time.monotonic(), self.path))
        try:
            if self._path().rstrip("/") == "/v1/models":
                names = fake.models or ("fake-model",)
                data = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in names]
                self._send(200, {"object": "list", "data": data})
            else:
                self._send(404, Reply.error(404, f"no route GET {self.path}").body or {})
        finally:
            fake._done()

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        fake = self.server_fake
        body = self._read_json()
        headers = self._header_dict()
        number = fake._record(Received("POST", self._path(), body, headers, time.monotonic(), self.path))
        try:
            if self._path().rstrip("/") != "/v1/chat/completions":
                self._send(404, Reply.error(404, f"no route POST {self.path}").body or {})
                return
            if body is None:
                self._send(400, Reply.error(400, "request body is not JSON").body or {})
                return
            reply = fake._reply_to(body)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.echo_key:
                reply = echoing(reply, headers.get("authorization", "").removeprefix("Bearer "))
            if reply.wire is not None:
                self.wfile.write(reply.wire)
                self.close_connection = True
            elif reply.drip > 0 or reply.raw is not None:
                raw = reply.raw if reply.raw is not None else json.dumps(completion_body(reply, body, number))
                self._send_bytes(reply, raw.encode() if isinstance(raw, str) else raw)
            elif reply.body is not None:
                self._send(reply.status, reply.body, reply.headers)
            elif reply.status != 200:
                self._send(reply.status, Reply.error(reply.status).body or {}, reply.headers)
            else:
                self._send(200, completion_body(reply, body, number), reply.headers)
        finally:
            fake._done()


@pytest.fixture
def fake_openai() -> Iterator[Callable[..., FakeOpenAI]]:
    """A factory: `fake_openai(handler=None, models=("fake-model",))` returns a started server."""
    servers: list[FakeOpenAI] = []

    def make(handler: Handler | None = None, models: tuple[str, ...] | None = ("fake-model",)) -> FakeOpenAI:
        server = FakeOpenAI(handler, models).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def hostile_openai(fake_openai: Callable[..., FakeOpenAI]) -> Callable[..., FakeOpenAI]:
    """A factory: `hostile_openai(mode, bad=None)` returns a started server misbehaving as `HOSTILE[mode]`
    for its first `bad` requests (None: every request), then answering `ok: <question>`."""

    def make(mode: str, bad: int | None = None) -> FakeOpenAI:
        server = fake_openai()
        server.handler = hostile(mode, bad)(server)
        return server

    return make


def digest_answer(words: int, delay: float) -> Handler:
    """Answers `<12 hex digits of the question's sha1> 答 答 ...` (`words` words) after `delay` seconds,
    with fingerprint `fp_bench`: each answer is its question's own, so "identical answers" from two
    clients is a real check (a reply given to the wrong request would show)."""
    filler = " ".join(["答"] * max(0, words - 1))

    def handler(body: dict[str, Any]) -> Reply:
        question = str(body["messages"][-1]["content"])
        digest = hashlib.sha1(question.encode()).hexdigest()[:12]
        return Reply(text=f"{digest} {filler}".strip(), delay=delay, system_fingerprint="fp_bench")

    return handler


def main(argv: list[str] | None = None) -> None:
    """`python -m tests.fake_openai --delay 0.05`: a fixed-latency server in its own process (benchmarks)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds before each answer")
    parser.add_argument("--words", type=int, default=32, help="words in each answer")
    args = parser.parse_args(argv)
    server = FakeOpenAI(digest_answer(args.words, args.delay), models=None)
    server.start(port=args.port)
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
