"""Worker threads shared fairly: each session may hold only so many of the process's worker threads.

anyio runs blocking calls on at most 40 threads (its default limiter) for the whole process, so one
session flooding slow sync handlers could take them all and starve every other session. A Session
installs its own CapacityLimiter in a context variable its handler tasks inherit; `run_in_worker`
takes a slot of it before a thread of the shared pool.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

import anyio

__all__ = ["SESSION_WORKERS", "leave_if_workers_linger", "run_in_worker"]

T = TypeVar("T")

SESSION_WORKERS: ContextVar[anyio.CapacityLimiter | None] = ContextVar("mcpkit_session_workers", default=None)


async def run_in_worker(fn: Callable[[], T]) -> T:
    """Run blocking `fn` on a worker thread, within the current session's share of them (if any).

    On cancellation the thread is abandoned (it runs on, but the caller and both slots are freed).
    """
    limiter = SESSION_WORKERS.get()
    if limiter is None:
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
    async with limiter:
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)


def leave_if_workers_linger() -> None:
    """End the process now if a worker thread still runs: a sync handler on a thread cannot be
    interrupted, and waiting for it would keep a server that was told to stop alive."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stderr.flush()
        os._exit(0)
