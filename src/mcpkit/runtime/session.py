"""Drive a sans-I/O Connection over a MessageStream: the only layer that awaits.

One task per inbound request (cancelled when the peer cancels it), an awaitable per outbound
request (with a timeout that progress resets, under a hard cap), and one reader loop.

On asyncio a request's task is a bare `asyncio.Task` and peer cancellation is `Task.cancel()`: an
anyio task plus a cancel scope per request was a third of the server's time. Elsewhere (trio) each
request runs in the session's task group under its own cancel scope.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Coroutine
from contextvars import Context, copy_context
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol import events as ev
from ..protocol.connection import Connection
from ..protocol.errors import (
    INVALID_REQUEST,
    SERVER_BUSY,
    MCPError,
    RequestCancelled,
)
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import RequestId, error_response
from ..protocol.lifecycle import Negotiated
from ._native import Loop, Task, current_task, in_async_context, running_loop, start_task, wait_tasks
from .flag import Flag
from .origin import RECEIVED_FROM
from .requesting import Pending, ProgressCallback, Requesting
from .stream import Inbound, MessageStream, StreamAttribute, encoded
from .thread_share import SESSION_THREADS, ThreadShare

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

__all__ = ["NotificationHandler", "ProgressCallback", "RequestHandler", "Session"]

log = logging.getLogger("mcpkit")

JSON = dict[str, Any]
RequestHandler = Callable[["Session", ev.RequestReceived], Coroutine[Any, Any, JSON]]
NotificationHandler = Callable[["Session", ev.NotificationReceived], Coroutine[Any, Any, None]]


class Session(Requesting):
    """A running conversation with one peer.

    `max_in_flight` caps the peer's requests being handled at once: one more is answered at once with
    SERVER_BUSY (-32010). `max_worker_threads` caps the worker threads its sync handlers hold at once
    (of the process's shared pool), so one peer cannot starve the others. None: no cap.
    `cancel_send_timeout` (seconds, default 1) bounds how long a timed-out or cancelled request waits
    to hand its notifications/cancelled to the stream.
    """

    cancel_send_timeout: float = 1.0

    def __init__(
        self,
        connection: Connection,
        stream: MessageStream,
        on_request: RequestHandler,
        on_notification: NotificationHandler | None = None,
        *,
        max_in_flight: int | None = None,
        max_worker_threads: int | None = None,
    ) -> None:
        if (max_in_flight is not None and max_in_flight < 1) or (
            max_worker_threads is not None and max_worker_threads < 1
        ):
            raise ValueError("max_in_flight and max_worker_threads must be positive (or None)")
        self.max_in_flight = max_in_flight if max_in_flight is not None else sys.maxsize
        self.max_worker_threads = max_worker_threads
        self.connection = connection
        self.stream = stream
        self._on_request = on_request
        self._on_notification = on_notification
        self._pending: dict[RequestId, Pending] = {}
        # What cancels the handler of each inbound request in flight, by request id.
        self._handlers: dict[RequestId, Task[None] | anyio.CancelScope] = {}
        self._tasks: set[Task[None]] = set()  # every live native handler task
        self._loop: Loop | None = None
        self._tg: TaskGroup | None = None
        self.ready = Flag()
        self.closed = Flag()
        self._input_ended = False  # the peer sends nothing more; what it sent may still be answered
        self._idle: anyio.Event | None = None  # set when the last handler ends, once waited on
        self._running = False
        self._context = copy_context()  # Session.run's, once it runs: what every handler starts from
        self._adopt(stream)

    def _adopt(self, stream: MessageStream) -> None:
        """What the transport agreed for this connection without a handshake on it (`StreamAttribute`)."""
        restored = stream.extra(StreamAttribute.restored, None)
        agreed = stream.extra(StreamAttribute.pre_agreed, None)
        if restored is not None:
            caps, info = restored.client_capabilities, restored.client_info
            self.connection.assume(restored.version, caps, info, log_level=restored.log_level)
        elif agreed is not None:
            self.connection.assume(agreed)
        if restored is not None or agreed is not None:
            self.ready.set()

    @property
    def negotiated(self) -> Negotiated:
        n = self.connection.negotiated
        if n is None:
            raise MCPError(INVALID_REQUEST, "the session is not initialized")
        return n

    async def run(self) -> None:
        """Take the stream's messages until the peer goes away; then cancel in-flight handlers and fail
        pending requests.

        A stream with an `eof_grace` (stdio, whose EOF closes only the peer's input) first lets the
        requests already read finish, for up to that many seconds, so their responses are not lost.
        """
        self._loop = running_loop()
        self._running = True
        # handler tasks start in a copy of this context, and with it this session's share of worker threads
        workers = self.max_worker_threads
        token = SESSION_THREADS.set(ThreadShare(workers))
        self._context = copy_context()
        try:
            if self._loop is not None:
                try:
                    await self._take_all()
                    await self._drain()
                finally:
                    await self._stop_tasks()
            else:
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    try:
                        await self._take_all()
                        await self._drain()
                    finally:
                        tg.cancel_scope.cancel()
        finally:
            SESSION_THREADS.reset(token)
            self._running = False
            self._tg = None
            self._fail_pending()
            self.closed.set()

    async def _drain(self) -> None:
        grace = self.stream.extra(StreamAttribute.eof_grace, 0.0)
        if grace <= 0:
            return
        self._input_ended = True
        self._fail_pending()  # no response can arrive any more: handlers waiting on one go on at once
        if self._loop is not None:
            tasks = [task for task in self._tasks if not task.done()]
            if tasks:
                await wait_tasks(tasks, grace)
        elif self._handlers:
            self._idle = anyio.Event()
            with anyio.move_on_after(grace):
                await self._idle.wait()

    def _spawn(
        self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any, context: Context | None = None
    ) -> None:
        """Run `fn(*args)` in its own task, in a copy of `context` (default: the session's): a native
        task on asyncio, else in the session's task group."""
        context = (context or self._context).copy()
        if self._loop is not None:  # started as requests are, so handlers start in the order sent
            task = start_task(self._loop, self._logged(fn, *args), context)
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

    async def _take_all(self) -> None:
        try:
            await self.stream.deliver_to(self.deliver)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    async def deliver(self, inbound: Inbound) -> None:
        """Take one inbound message (the one entry for them, `MessageStream.deliver_to`'s callback): its
        requests start at once, in the caller's turn of the loop; the rest is acted on before this
        returns, so a caller delivering in order is served in order."""
        data, origin = inbound
        if type(data) is Oversized:
            too_big = f"Invalid Request: message exceeds {data.limit} bytes"
            await self._write(error_response(None, INVALID_REQUEST, too_big))
            return
        connection = self.connection
        events = connection.receive(data) if type(data) is dict else connection.receive_data(data)  # type: ignore[arg-type]
        context = self._context
        if origin is not None:  # what the handlers it starts read as RECEIVED_FROM
            context = context.copy()
            context.run(RECEIVED_FROM.set, origin)
        native = self._loop is not None
        for event in events:
            # the hot path, without a coroutine call
            if native and type(event) is ev.RequestReceived and len(self._handlers) < self.max_in_flight:
                self._start(event, context)
            else:
                await self._dispatch(event, context)

    async def _dispatch(self, event: ev.Event, context: Context | None = None) -> None:
        if isinstance(event, ev.RequestReceived):
            if len(self._handlers) >= self.max_in_flight:
                await self._refuse_busy(event.id)
            elif self._loop is not None:
                self._start(event, context)
            else:
                self._handlers[event.id] = anyio.CancelScope()  # counted in flight from now on
                self._spawn(self._handle, event, context=context)
        elif isinstance(event, ev.ResponseReceived | ev.ErrorReceived):
            pending = self._pending.get(event.id)
            if pending is not None:
                if isinstance(event, ev.ResponseReceived):
                    pending.result = event.result
                else:
                    pending.error = event.error
                pending.done.set()
        elif isinstance(event, ev.SendMessage):
            message = event.message  # a reply the core made itself belongs to the request it answers
            await self._write(message, None if "method" in message else message.get("id"))
        elif isinstance(event, ev.NotificationReceived):
            if self._on_notification is not None:
                self._spawn(self._on_notification, self, event, context=context)
        elif isinstance(event, ev.CancelledByPeer):
            self._cancel_handler(event.id)
        elif isinstance(event, ev.ProgressReceived):
            await self._progressed(event)
        elif isinstance(event, ev.Ready):
            self.ready.set()

    async def _refuse_busy(self, rid: RequestId) -> None:
        # Answered inline by the reader, so a peer flooding requests is also slowed to the pace of refusals.
        cap = self.max_in_flight
        why = f"Server busy: {cap} requests of this session are already in flight; retry when one ends"
        message = self.connection.respond_error(rid, MCPError(SERVER_BUSY, why, {"maxInFlight": cap}))
        if message is not None:
            await self._write(message, rid)

    def _start(self, event: ev.RequestReceived, context: Context | None) -> None:
        assert self._loop is not None
        task = start_task(self._loop, self._handle_native(event), (context or self._context).copy())
        if not task.done():  # a handler started eagerly may have answered already
            self._handlers[event.id] = task
            self._tasks.add(task)

    async def _handle_native(self, event: ev.RequestReceived) -> None:
        rid = event.id
        try:
            try:
                message = await self._answer(event)
            finally:
                self._handlers.pop(rid, None)
            if message is not None:
                await self._write(message, rid)
        finally:
            self._tasks.discard(current_task())

    async def _handle(self, event: ev.RequestReceived) -> None:
        rid = event.id
        placeholder = self._handlers.get(rid)
        scope = placeholder if isinstance(placeholder, anyio.CancelScope) else anyio.CancelScope()
        with scope:
            self._handlers[rid] = scope
            try:
                message = await self._answer(event)
            finally:
                del self._handlers[rid]
                if self._idle is not None and not self._handlers:
                    self._idle.set()
        if scope.cancelled_caught:
            self._cancelled(rid)
        elif message is not None:
            await self._write(message, rid)

    async def _answer(self, event: ev.RequestReceived) -> JSON | None:
        """The response (or error response) the handler's outcome makes for the request."""
        try:
            result = await self._on_request(self, event)
        except MCPError as exc:
            return self.connection.respond_error(event.id, exc)
        except Exception as exc:
            log.exception("handler for %r failed", event.method)
            return self.connection.respond_error(event.id, exc)
        return self.connection.respond(event.id, result)

    def _cancel_handler(self, rid: RequestId) -> None:
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

    async def _stop_tasks(self) -> None:
        tasks = [task for task in self._tasks if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            with anyio.CancelScope(shield=True):
                await wait_tasks(tasks)
        self._tasks.clear()

    async def _write(self, message: JSON, related: RequestId | None = None) -> None:
        out = encoded(message, related)
        try:
            await self.stream.send(out)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("dropped a message: the stream is closed")

    # ---- what handlers and high-level APIs call ---------------------------------------------

    async def apply(self, events: list[ev.Event]) -> None:
        """Act on the events a Connection call returned outside the reader (e.g. `adopt_modern`'s Ready)."""
        for event in events:
            await self._dispatch(event)

    async def notify(self, method: str, params: JSON | None = None, related: RequestId | None = None) -> None:
        await self._write(self.connection.send_notification(method, params), related)

    def notify_soon(self, method: str, params: JSON | None = None) -> None:
        """Send a notification from synchronous code, on the event loop or in a sync tool's worker
        thread; dropped if the session is not running or not ready."""
        if not (self._running and self.ready.is_set()):
            return
        loop = self._loop
        if loop is not None and running_loop() is not loop:  # another thread: the loop must spawn it
            loop.call_soon_threadsafe(self._spawn, self._notify_quietly, method, params)
        elif loop is None and not in_async_context():
            import anyio.from_thread  # trio's worker threads only: ~7 ms of every start otherwise

            anyio.from_thread.run_sync(self._spawn, self._notify_quietly, method, params)
        else:
            self._spawn(self._notify_quietly, method, params)

    async def _notify_quietly(self, method: str, params: JSON | None) -> None:
        try:
            await self.notify(method, params)
        except MCPError as exc:
            log.debug("notification %r not sent: %s", method, exc)

    async def send_message(self, message: JSON | None, related: RequestId | None = None) -> None:
        """Write a message a Connection method built (None means there is nothing to send)."""
        if message is not None:
            await self._write(message, related)
