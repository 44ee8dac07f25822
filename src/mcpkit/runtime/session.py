"""Drive a sans-I/O Connection over a MessageStream: the only layer that awaits.

One reader loop; one task per inbound request, cancelled when the peer cancels it (runtime/in_flight.py);
an awaitable per outbound request, with a timeout that progress resets under a hard cap (runtime/pending.py).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Coroutine
from contextvars import Context
from typing import Any

import anyio

from ..protocol import events as ev
from ..protocol.connection import Connection
from ..protocol.errors import INVALID_REQUEST, MCPError
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import JSON, RequestId, error_response
from ..protocol.lifecycle import Negotiated
from ._native import in_async_context, running_loop
from .flag import Flag
from .in_flight import InFlight
from .origin import RECEIVED_FROM
from .pending import PendingRequests, ProgressCallback
from .stream import Inbound, MessageStream, StreamAttribute, encoded
from .thread_share import SESSION_THREADS, ThreadShare

__all__ = ["NotificationHandler", "ProgressCallback", "RequestHandler", "Session"]

log = logging.getLogger("mcpkit")

RequestHandler = Callable[["Session", ev.RequestReceived], Coroutine[Any, Any, JSON]]
NotificationHandler = Callable[["Session", ev.NotificationReceived], Coroutine[Any, Any, None]]


class Session:
    """A running conversation with one peer.

    `max_in_flight` caps the peer's requests being handled at once: one more is answered at once with
    SERVER_BUSY (-32010). `max_worker_threads` caps the worker threads its sync handlers hold at once
    (of the process's shared pool), so one peer cannot starve the others. None: no cap.
    `in_flight`: the peer's requests being handled (runtime/in_flight.py); `pending`: our own requests
    awaiting their answers (runtime/pending.py).
    """

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
        self.max_worker_threads = max_worker_threads
        self.connection = connection
        self.stream = stream
        self._on_request = on_request
        self._on_notification = on_notification
        self.pending = PendingRequests(connection, self._write)
        cap = max_in_flight if max_in_flight is not None else sys.maxsize
        self.in_flight = InFlight(connection, self._answer, self._write, cap)
        self.ready = Flag()
        self.closed = Flag()
        self._running = False
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
        self._running = True
        # handler tasks start in a copy of this context, and with it this session's share of worker threads
        token = SESSION_THREADS.set(ThreadShare(self.max_worker_threads))
        try:
            async with self.in_flight.running():
                await self._take_all()
                await self._drain()
        finally:
            SESSION_THREADS.reset(token)
            self._running = False
            self.pending.end()
            self.closed.set()

    async def _drain(self) -> None:
        grace = self.stream.extra(StreamAttribute.eof_grace, 0.0)
        if grace <= 0:
            return
        self.pending.end()  # no response can arrive any more: handlers waiting on one go on at once
        await self.in_flight.drain(grace)

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
        in_flight = self.in_flight
        context = in_flight.context
        if origin is not None:  # what the handlers it starts read as RECEIVED_FROM
            context = context.copy()
            context.run(RECEIVED_FROM.set, origin)
        native = in_flight.loop is not None
        for event in events:
            # the hot path, without a coroutine call
            if not (native and type(event) is ev.RequestReceived and in_flight.start_now(event, context)):
                await self._dispatch(event, context)

    async def _dispatch(self, event: ev.Event, context: Context | None = None) -> None:
        if isinstance(event, ev.RequestReceived):
            await self.in_flight.take(event, context)
        elif isinstance(event, ev.ResponseReceived | ev.ErrorReceived):
            self.pending.answered(event)
        elif isinstance(event, ev.SendMessage):
            message = event.message  # a reply the core made itself belongs to the request it answers
            await self._write(message, None if "method" in message else message.get("id"))
        elif isinstance(event, ev.NotificationReceived):
            if self._on_notification is not None:
                self.in_flight.spawn(self._on_notification, self, event, context=context)
        elif isinstance(event, ev.CancelledByPeer):
            self.in_flight.cancel(event.id)
        elif isinstance(event, ev.ProgressReceived):
            await self.pending.progressed(event)
        elif isinstance(event, ev.Ready):
            self.ready.set()

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

    async def _write(self, message: JSON, related: RequestId | None = None) -> None:
        out = encoded(message, related)
        try:
            await self.stream.send(out)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("dropped a message: the stream is closed")

    # ---- what handlers and high-level APIs call ---------------------------------------------

    async def apply(self, events: list[ev.Event]) -> None:
        """Act on the events a Connection call returned outside `deliver` (e.g. `adopt_stateless`'s Ready)."""
        for event in events:
            await self._dispatch(event)

    async def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
        progress_token: str | int | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> JSON:
        """Send a request and wait for its result; raise RemoteError for an error response.
        `on_id(id)` (optional) learns the request's id before it is sent.

        On timeout (reset by each progress notification, never past `max_timeout`) or when the
        caller is cancelled, the peer is sent notifications/cancelled.
        """
        self.pending.check_open()
        if on_progress is not None and progress_token is not None:  # else the connection allocates one
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": progress_token}
        rid, message = self.connection.send_request(method, params, progress=on_progress is not None)
        if on_id is not None:
            on_id(rid)
        return await self.pending.send_and_wait(
            rid, message, timeout=timeout, max_timeout=max_timeout, on_progress=on_progress, related=related
        )

    async def initialize(self, version: str, timeout: float | None) -> Negotiated:
        """The client's handshake: send initialize, wait for the result, then notifications/initialized."""
        rid, message = self.connection.initialize(version)
        await self.pending.send_and_wait(rid, message, timeout=timeout)
        return self.negotiated

    async def send_built(
        self,
        rid: RequestId,
        message: JSON,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JSON:
        """Send a request message a Connection method built (its id known to the caller) and wait."""
        return await self.pending.send_and_wait(rid, message, timeout=timeout, on_progress=on_progress)

    def postpone(self, rid: RequestId) -> None:
        """Restart the timeout of our request `rid` from now, as the peer's progress would (the
        transport is still busy with it: the time is not the peer's)."""
        self.pending.postpone(rid)

    async def notify(self, method: str, params: JSON | None = None, related: RequestId | None = None) -> None:
        await self._write(self.connection.send_notification(method, params), related)

    def notify_soon(self, method: str, params: JSON | None = None) -> None:
        """Send a notification from synchronous code, on the event loop or in a sync tool's worker
        thread; dropped if the session is not running or not ready."""
        if not (self._running and self.ready.is_set()):
            return
        loop, spawn = self.in_flight.loop, self.in_flight.spawn
        if loop is not None and running_loop() is not loop:  # another thread: the loop must spawn it
            loop.call_soon_threadsafe(spawn, self._notify_quietly, method, params)
        elif loop is None and not in_async_context():
            import anyio.from_thread  # trio's worker threads only: ~7 ms of every start otherwise

            anyio.from_thread.run_sync(spawn, self._notify_quietly, method, params)
        else:
            spawn(self._notify_quietly, method, params)

    async def _notify_quietly(self, method: str, params: JSON | None) -> None:
        try:
            await self.notify(method, params)
        except MCPError as exc:
            log.debug("notification %r not sent: %s", method, exc)

    async def send_message(self, message: JSON | None, related: RequestId | None = None) -> None:
        """Write a message a Connection method built (None means there is nothing to send)."""
        if message is not None:
            await self._write(message, related)
