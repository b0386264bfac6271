"""The local fake OpenAI-compatible server (`tests/fake_openai.py`) in a process of its own, for the
benchmarks that time the harness around HTTP calls (`bench_judge`, `bench_sessions`): its threads do not
compete with the harness's for one interpreter's GIL, as a real server's would not.

    with served(reply, latency=0.1) as server:   # reply(body) -> the answer's text; a module-level function
        ... server.base_url ...
    server.requests, server.max_in_flight        # counted by the server, read once it stopped
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Served:
    base_url: str
    requests: int = 0
    max_in_flight: int = 0


def _serve(
    reply: Callable[[dict[str, Any]], str],
    latency: float,
    models: tuple[str, ...] | None,
    queue: Any,
    stop: Any,
) -> None:
    """Child process: serve until told to stop, each answer after `latency`; then report the counts."""
    from http.server import ThreadingHTTPServer

    from tests.fake_openai import FakeOpenAI, Reply

    # socketserver's default listen backlog (5) refuses part of a burst of new connections, and the client
    # then retries after a back-off: a server artefact, not the harness's overhead
    ThreadingHTTPServer.request_queue_size = 128
    with FakeOpenAI(lambda body: Reply(text=reply(body), delay=latency), models=models) as server:
        queue.put(server.base_url)
        stop.wait()
        queue.put({"requests": server.count(), "max_in_flight": server.max_in_flight})


@contextmanager
def served(
    reply: Callable[[dict[str, Any]], str],
    latency: float,
    models: tuple[str, ...] | None = ("fake-model",),
) -> Iterator[Served]:
    """The server running in a spawned process (`models`: the names it serves; None, any)."""
    context = multiprocessing.get_context("spawn")
    queue, stop = context.Queue(), context.Event()
    process = context.Process(target=_serve, args=(reply, latency, models, queue, stop), daemon=True)
    process.start()
    server = Served(queue.get(timeout=60))
    try:
        yield server
    finally:
        stop.set()
        seen = queue.get(timeout=60)
        server.requests, server.max_in_flight = seen["requests"], seen["max_in_flight"]
        process.join(timeout=10)
