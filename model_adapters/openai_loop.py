"""Driving coroutines for a synchronous caller: an event loop thread and a streaming worker pool.

The `openai:` adapter's `generate` is a plain iterator (the runner stores each answer as it
arrives), while its requests are coroutines on one event loop. `LoopThread` keeps that loop (and
the HTTP session bound to it) alive in a daemon thread for the adapter's lifetime; `stream` runs
`handle` over the items with `concurrency` worker coroutines pulling from one queue (no task or
semaphore per item) and hands each `(item, result)` to the caller's thread through a
`queue.SimpleQueue`, so a slow consumer never eats into a request's deadline. The first exception
stops every worker (nothing more is started) and is raised in the caller; a caller that stops
iterating cancels whatever is still in flight.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_DONE = object()  # the end of one `stream` call's results


class LoopThread:
    """An asyncio event loop in a daemon thread, alive until `stop`."""

    def __init__(self, name: str = "openai-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run `coroutine` on the loop; its result (or exception) arrives in the returned future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def stop(self) -> None:
        """Stop the loop and wait (10 s at most) for its thread to end."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


async def work_through(
    items: Sequence[T],
    concurrency: int,
    handle: Callable[[T], Awaitable[R]],
    put: Callable[[Any], None],
) -> None:
    """`put((item, await handle(item)))` for every item, `concurrency` at a time; on the first
    exception cancel every worker and `put` it; always `put(_DONE)` last."""
    pending = collections.deque(items)

    async def worker() -> None:
        """Take the next item until none is left (a worker per slot: no task per item)."""
        while pending:
            item = pending.popleft()
            put((item, await handle(item)))

    workers = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(items)))]
    try:
        await asyncio.gather(*workers)
    except BaseException as exc:  # an error no retry fixes, a bug, or the caller cancelled us
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        put(exc)
        if not isinstance(exc, Exception):
            raise
    finally:
        put(_DONE)


def stream(
    loop: LoopThread, items: Sequence[T], concurrency: int, handle: Callable[[T], Awaitable[R]]
) -> Iterator[tuple[T, R]]:
    """Yield `(item, result)` in the caller's thread as each completes on `loop`; raise the first error."""
    results: queue.SimpleQueue[Any] = queue.SimpleQueue()
    future = loop.submit(work_through(items, concurrency, handle, results.put))
    try:
        while (result := results.get()) is not _DONE:
            if isinstance(result, BaseException):
                raise result
            yield result
    finally:
        future.cancel()  # after an error or when the caller stops early: cancel what is in flight
