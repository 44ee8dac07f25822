"""The requests a Session sent and waits on: each with a timeout that the peer's progress resets, under a
hard cap, and notifications/cancelled when it times out or its caller is cancelled."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from ..protocol import events as ev
from ..protocol.connection import Connection
from ..protocol.errors import CONNECTION_CLOSED, MCPError, RequestCancelled
from ..protocol.jsonrpc import JSON, RequestId

__all__ = ["Pending", "PendingRequests", "ProgressCallback", "Write"]

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
Write = Callable[[JSON, RequestId | None], Awaitable[None]]


@dataclass(slots=True)
class Pending:
    """One request of ours awaiting its answer: what resets its deadline, and how it ended."""

    on_progress: ProgressCallback | None
    timeout: float
    cap: float
    done: anyio.Event = field(default_factory=lambda: anyio.Event())  # anyio.Event loads a module tree
    result: JSON | None = None
    error: MCPError | None = None
    scope: anyio.CancelScope | None = None


class PendingRequests:
    """Our requests in flight, by id. `write(message, related)` sends a message on the Session's stream.

    `cancel_send_timeout` (seconds, default 1) bounds how long a timed-out or cancelled request waits to
    hand its notifications/cancelled to the stream.
    """

    cancel_send_timeout = 1.0

    def __init__(self, connection: Connection, write: Write) -> None:
        self.connection = connection
        self.write = write
        self.ended = False  # no answer can arrive any more: every request fails at once
        self._table: dict[RequestId, Pending] = {}

    def check_open(self) -> None:
        """CONNECTION_CLOSED once no answer can arrive (before a request takes an id)."""
        if self.ended:
            raise MCPError(CONNECTION_CLOSED, "Connection closed")

    async def send_and_wait(
        self,
        rid: RequestId,
        message: JSON,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        related: RequestId | None = None,
    ) -> JSON:
        """Send our request `rid` and wait for its result; raise RemoteError for an error response and
        RequestCancelled when `timeout` (reset by each progress notification, never past `max_timeout`)
        passes. On timeout or when the caller is cancelled, the peer is sent notifications/cancelled."""
        self.check_open()
        now = anyio.current_time()
        cap = now + max_timeout if max_timeout is not None else math.inf
        first = min(now + timeout, cap) if timeout is not None else cap
        pending = Pending(on_progress, timeout if timeout is not None else math.inf, cap)
        self._table[rid] = pending
        try:
            # The write is inside the deadline too: a peer that stops reading must not outlast `timeout`.
            with anyio.CancelScope(deadline=first) as pending.scope:
                await self.write(message, related)
                await pending.done.wait()
            if not pending.done.is_set():
                await self._cancel(rid, "timed out", related)
                raise RequestCancelled(f"Request {message.get('method')!r} timed out")
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel(rid, "cancelled by the caller", related)
            raise
        finally:
            del self._table[rid]
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    async def _cancel(self, rid: RequestId, reason: str, related: RequestId | None) -> None:
        message = self.connection.cancel(rid, reason)
        if message is not None:
            # Sent even from a cancelled caller, but never waited on for long: a peer that reads nothing
            # would hold the caller forever (a stream that buffers keeps the message queued anyway).
            with anyio.move_on_after(self.cancel_send_timeout):
                await self.write(message, related)

    def answered(self, event: ev.ResponseReceived | ev.ErrorReceived) -> None:
        """The peer's response or error response to one of ours ends its wait."""
        pending = self._table.get(event.id)
        if pending is not None:
            if isinstance(event, ev.ResponseReceived):
                pending.result = event.result
            else:
                pending.error = event.error
            pending.done.set()

    def postpone(self, rid: RequestId) -> None:
        """Restart the timeout of our request `rid` from now, as the peer's progress does."""
        pending = self._table.get(rid)
        if pending is not None and pending.scope is not None:
            pending.scope.deadline = min(anyio.current_time() + pending.timeout, pending.cap)

    async def progressed(self, event: ev.ProgressReceived) -> None:
        """The peer's progress on one of ours: its timeout restarts, its caller's callback hears it."""
        pending = self._table.get(event.request_id)
        if pending is None:
            return
        self.postpone(event.request_id)
        if pending.on_progress is not None:
            outcome = pending.on_progress(event.progress, event.total, event.message)
            if outcome is not None:
                await outcome

    def end(self) -> None:
        """No answer can arrive any more (the peer's input ended): every wait fails with
        CONNECTION_CLOSED, and so does every request from now on."""
        self.ended = True
        for pending in self._table.values():
            if not pending.done.is_set():
                pending.error = MCPError(CONNECTION_CLOSED, "Connection closed")
                pending.done.set()
