"""Worker threads shared fairly: each session may hold only so many of the process's threads. (A
"worker" elsewhere in mcpkit is a process of a cluster.)

The process runs blocking calls on at most 40 threads, so one session flooding slow sync handlers could
take them all and starve every other session. A Session installs its own ThreadShare in a context
variable its handler tasks inherit; `run_in_thread` runs a call within it. On asyncio the calls go to
`thread_pool` (a queue put per call, results back in batches); elsewhere (trio) to anyio's threads,
behind a CapacityLimiter of the share's size.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TypeVar

import anyio

from ._native import running_loop
from .thread_pool import Lane

__all__ = ["SESSION_THREADS", "ThreadShare", "leave_if_threads_linger", "run_in_thread"]

T = TypeVar("T")


class ThreadShare:
    """At most `cap` worker threads at once for one session's sync calls (None: no cap of its own)."""

    __slots__ = ("_lane", "_limiter", "cap")

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self._lane: Lane | None = None
        self._limiter: anyio.CapacityLimiter | None = None

    def run(self, fn: Callable[[], T]) -> Awaitable[T]:
        loop = running_loop()
        if loop is not None:
            lane = self._lane
            if lane is None or lane.loop is not loop:
                lane = self._lane = Lane(loop, self.cap)
            return lane.submit(fn)
        return self._on_anyio_thread(fn)

    async def _on_anyio_thread(self, fn: Callable[[], T]) -> T:
        if self.cap is None:
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.cap)
        async with self._limiter:
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)


SESSION_THREADS: ContextVar[ThreadShare | None] = ContextVar("mcpkit_session_workers", default=None)


def run_in_thread(fn: Callable[[], T]) -> Awaitable[T]:
    """Run blocking `fn` on a worker thread, within the current session's share of them (if any); await
    what it returns. Cancelled, the caller leaves at once; a call already on its thread runs on, abandoned.
    """
    share = SESSION_THREADS.get()
    if share is None:
        share = ThreadShare(None)
    return share.run(fn)


def leave_if_threads_linger() -> None:
    """End the process now if a worker thread still runs: a sync handler on a thread cannot be
    interrupted, and waiting for it would keep a server that was told to stop alive."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stderr.flush()
        os._exit(0)
