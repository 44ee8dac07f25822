"""Which event loop runs us, and a task that outlives the request that started it, on asyncio or trio.

The per-message paths use asyncio's own primitives when asyncio runs them (a bare Task, a loop future,
a loop timer: each a fraction of its anyio equivalent); `running_loop()` is how they tell, in one place.
Elsewhere they fall back to anyio, which is what runs under trio.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Collection, Coroutine
from contextlib import AbstractAsyncContextManager
from contextvars import Context
from typing import Any

import anyio
import sniffio

__all__ = [
    "Detached",
    "Loop",
    "Task",
    "current_task",
    "in_async_context",
    "running_loop",
    "spawn_detached",
    "start_task",
    "wait_tasks",
    "within",
]

Loop = asyncio.AbstractEventLoop
Task = asyncio.Task
current_task = asyncio.current_task


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop; None under another event loop (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


if sys.version_info >= (3, 12):

    def start_task(loop: Loop, coro: Coroutine[Any, Any, None], context: Context | None = None) -> Task[None]:
        """A task that runs its first step at once, in the caller's turn of the loop: a handler that never
        suspends is done before this returns, with no turn of the loop of its own (3.12's eager start,
        which also makes it the current task while it runs, so cancel scopes entered there hold)."""
        return asyncio.Task(coro, loop=loop, context=context, eager_start=True)

else:

    def start_task(loop: Loop, coro: Coroutine[Any, Any, None], context: Context | None = None) -> Task[None]:
        """A task, started on the loop's next turn (eager start needs Python 3.12)."""
        return loop.create_task(coro, context=context)


def in_async_context() -> bool:
    """Whether an event loop (asyncio or trio) runs in this thread: False in a sync tool's worker thread."""
    try:
        sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return False
    return True


async def wait_tasks(tasks: Collection[Task[None]], timeout: float | None = None) -> None:
    """Wait until the asyncio tasks are done, or `timeout` has passed."""
    await asyncio.wait(tasks, timeout=timeout)


def within(seconds: float) -> AbstractAsyncContextManager[Any]:
    """A block that raises TimeoutError after `seconds`: on asyncio a loop timer (a third of the cost of
    an anyio cancel scope), elsewhere anyio's fail_after."""
    return asyncio.timeout(seconds) if running_loop() is not None else _FailAfter(seconds)


class _FailAfter:
    def __init__(self, seconds: float) -> None:
        self._scope = anyio.fail_after(seconds)

    async def __aenter__(self) -> None:
        self._scope.__enter__()

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return self._scope.__exit__(*exc_info)


class Detached:
    """A task outside any task group of its caller's; `aclose()` cancels it and waits (5 s at most)."""

    def __init__(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._fn = fn
        self._scope = anyio.CancelScope()
        self._ended = anyio.Event()
        self.task: asyncio.Task[None] | None = None  # on asyncio: held, so it is not collected while it runs

    async def run(self) -> None:
        try:
            with self._scope:
                await self._fn()
        finally:
            self._ended.set()

    def cancel(self) -> None:
        self._scope.cancel()

    async def aclose(self) -> None:
        self._scope.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await self._ended.wait()


def spawn_detached(fn: Callable[[], Coroutine[Any, Any, None]]) -> Detached:
    """Start `fn()` as a task of the event loop itself (asyncio: a Task; trio: a system task)."""
    task = Detached(fn)
    loop = running_loop()
    if loop is not None:
        task.task = loop.create_task(task.run())
    else:  # anyio runs on asyncio or trio only, and trio is imported by what runs it
        trio = sys.modules["trio"]
        trio.lowlevel.spawn_system_task(_quiet, task.run)
    return task


async def _quiet(run: Callable[[], Coroutine[Any, Any, None]]) -> None:
    # an exception escaping a trio system task ends the whole run: the host's own failures are logged
    try:
        await run()
    except Exception:
        logging.getLogger("mcpkit").exception("a detached task failed")
