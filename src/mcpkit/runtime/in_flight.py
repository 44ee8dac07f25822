"""The peer's requests a Session is handling: one task each, cancelled when the peer cancels it.

On asyncio a request's task is a bare `asyncio.Task` and peer cancellation is `Task.cancel()`: an
anyio task plus a cancel scope per request was a third of the server's time. Elsewhere (trio) each
request runs in the session's task group under its own cancel scope.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from contextvars import Context, copy_context
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol import events as ev
from ..protocol.connection import Connection
from ..protocol.errors import SERVER_BUSY, MCPError, RequestCancelled
from ..protocol.jsonrpc import JSON, RequestId
from ._native import Loop, Task, current_task, running_loop, start_task, wait_tasks
from .pending import Write

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

__all__ = ["Answer", "InFlight"]

log = logging.getLogger("mcpkit")

Answer = Callable[[ev.RequestReceived], Awaitable[JSON | None]]


class InFlight:
    """The peer's requests being handled, by id, at most `max_in_flight` at once: one more is refused
    with SERVER_BUSY (-32010). `answer(event)` makes a request's response (None: none is sent);
    `write(message, related)` sends it. Other work of the session (a notification's handler) runs in
    tasks of its own here too (`spawn`), so that the session's end stops it."""

    def __init__(self, connection: Connection, answer: Answer, write: Write, max_in_flight: int) -> None:
        self.connection = connection
        self.answer = answer
        self.write = write
        self.max_in_flight = max_in_flight
        self.loop: Loop | None = None  # asyncio's, while running there: native tasks
        self.context = copy_context()  # what every task starts from: the one `running` was entered in
        # What cancels the handler of each request in flight, by request id.
        self._handlers: dict[RequestId, Task[None] | anyio.CancelScope] = {}
        self._tasks: set[Task[None]] = set()  # every live native task
        self._tg: TaskGroup | None = None
        self._idle: anyio.Event | None = None  # set when the last handler ends, once waited on

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run tasks for the block; at its end, cancel the ones still running."""
        self.loop = running_loop()
        self.context = copy_context()
        try:
            if self.loop is not None:
                try:
                    yield
                finally:
                    await self._stop_tasks()
            else:
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    try:
                        yield
                    finally:
                        tg.cancel_scope.cancel()
        finally:
            self._tg = None

    def start_now(self, event: ev.RequestReceived, context: Context) -> bool:
        """Start handling `event` at once, in the caller's turn of the loop (asyncio's native tasks only);
        False when no more may be in flight (then `take` refuses it)."""
        if len(self._handlers) >= self.max_in_flight:
            return False
        assert self.loop is not None
        task = start_task(self.loop, self._handle_native(event), context.copy())
        if not task.done():  # a handler started eagerly may have answered already
            self._handlers[event.id] = task
            self._tasks.add(task)
        return True

    async def take(self, event: ev.RequestReceived, context: Context | None) -> None:
        """Start handling `event` in a task of its own, or refuse it when the session is busy."""
        if len(self._handlers) >= self.max_in_flight:
            await self._refuse_busy(event.id)
        elif self.loop is not None:
            self.start_now(event, context or self.context)
        else:
            self._handlers[event.id] = anyio.CancelScope()  # counted in flight from now on
            self.spawn(self._handle, event, context=context)

    def spawn(
        self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any, context: Context | None = None
    ) -> None:
        """Run `fn(*args)` in its own task, in a copy of `context` (default: the session's): a native
        task on asyncio, else in the session's task group."""
        context = (context or self.context).copy()
        if self.loop is not None:  # started as requests are, so handlers start in the order sent
            task = start_task(self.loop, self._logged(fn, *args), context)
            if not task.done():
                self._tasks.add(task)
        else:
            assert self._tg is not None
            context.run(self._tg.start_soon, fn, *args)  # trio's task copies the context it starts in

    async def _logged(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        try:
            await fn(*args)
        except Exception:
            log.exception("%s failed", getattr(fn, "__qualname__", fn))
        finally:
            self._tasks.discard(current_task())

    async def _refuse_busy(self, rid: RequestId) -> None:
        # Answered inline by the reader, so a peer flooding requests is also slowed to the pace of refusals.
        cap = self.max_in_flight
        why = f"Server busy: {cap} requests of this session are already in flight; retry when one ends"
        message = self.connection.respond_error(rid, MCPError(SERVER_BUSY, why, {"maxInFlight": cap}))
        if message is not None:
            await self.write(message, rid)

    async def _handle_native(self, event: ev.RequestReceived) -> None:
        rid = event.id
        try:
            try:
                message = await self.answer(event)
            finally:
                self._handlers.pop(rid, None)
            if message is not None:
                await self.write(message, rid)
        finally:
            self._tasks.discard(current_task())

    async def _handle(self, event: ev.RequestReceived) -> None:
        rid = event.id
        placeholder = self._handlers.get(rid)
        scope = placeholder if isinstance(placeholder, anyio.CancelScope) else anyio.CancelScope()
        with scope:
            self._handlers[rid] = scope
            try:
                message = await self.answer(event)
            finally:
                del self._handlers[rid]
                if self._idle is not None and not self._handlers:
                    self._idle.set()
        if scope.cancelled_caught:
            self._cancelled(rid)
        elif message is not None:
            await self.write(message, rid)

    def cancel(self, rid: RequestId) -> None:
        """The peer cancelled its request `rid`: its handler is cancelled and no response is sent."""
        handler = self._handlers.get(rid)
        if isinstance(handler, Task):
            handler.cancel()
            # A callback, not the task itself: a task cancelled before its first step runs no code.
            handler.add_done_callback(functools.partial(self._cancel_done, rid))
        elif handler is not None:
            handler.cancel()

    def _cancel_done(self, rid: RequestId, task: Task[None]) -> None:
        self._handlers.pop(rid, None)
        self._tasks.discard(task)
        if task.cancelled():
            self._cancelled(rid)

    def _cancelled(self, rid: RequestId) -> None:
        # utilities "Cancellation": the receiver SHOULD NOT send a response for a cancelled request.
        self.connection.respond_error(rid, RequestCancelled("cancelled by the peer"))

    async def drain(self, grace: float) -> None:
        """Wait up to `grace` seconds for the requests in flight to be answered."""
        if self.loop is not None:
            tasks = [task for task in self._tasks if not task.done()]
            if tasks:
                await wait_tasks(tasks, grace)
        elif self._handlers:
            self._idle = anyio.Event()
            with anyio.move_on_after(grace):
                await self._idle.wait()

    async def _stop_tasks(self) -> None:
        tasks = [task for task in self._tasks if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            with anyio.CancelScope(shield=True):
                await wait_tasks(tasks)
        self._tasks.clear()
