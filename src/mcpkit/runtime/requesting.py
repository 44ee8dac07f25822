"""The requests a Session sends and waits on: each with a timeout that the peer's progress resets,
under a hard cap, and notifications/cancelled when it times out or its caller is cancelled."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol import events as ev
from ..protocol.connection import Connection
from ..protocol.errors import CONNECTION_CLOSED, MCPError, RequestCancelled
from ..protocol.jsonrpc import RequestId
from ..protocol.lifecycle import Negotiated
from .flag import Flag

__all__ = ["Pending", "ProgressCallback", "Requesting"]

JSON = dict[str, Any]
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]


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


class Requesting:
    """The requesting half of a Session (its base class): what it sends and waits on."""

    cancel_send_timeout: float
    connection: Connection
    closed: Flag
    _pending: dict[RequestId, Pending]
    _input_ended: bool

    if TYPE_CHECKING:

        @property
        def negotiated(self) -> Negotiated: ...

        async def _write(self, message: JSON, related: RequestId | None = None) -> None: ...

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
        if self.closed.is_set() or self._input_ended:
            raise MCPError(CONNECTION_CLOSED, "Connection closed")
        if on_progress is not None and progress_token is not None:  # else the connection allocates one
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": progress_token}
        rid, message = self.connection.send_request(method, params, progress=on_progress is not None)
        if on_id is not None:
            on_id(rid)
        return await self._send_and_wait(rid, message, timeout, max_timeout, on_progress, related)

    async def initialize(self, version: str, timeout: float | None) -> Negotiated:
        """The client's handshake: send initialize, wait for the result, then notifications/initialized."""
        rid, message = self.connection.initialize(version)
        await self._send_and_wait(rid, message, timeout, None, None, None)
        return self.negotiated

    async def _send_and_wait(
        self,
        rid: RequestId,
        message: JSON,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
        related: RequestId | None,
    ) -> JSON:
        now = anyio.current_time()
        cap = now + max_timeout if max_timeout is not None else math.inf
        first = min(now + timeout, cap) if timeout is not None else cap
        pending = Pending(on_progress, timeout if timeout is not None else math.inf, cap)
        self._pending[rid] = pending
        try:
            # The write is inside the deadline too: a peer that stops reading must not outlast `timeout`.
            with anyio.CancelScope(deadline=first) as pending.scope:
                await self._write(message, related)
                await pending.done.wait()
            if not pending.done.is_set():
                await self._cancel(rid, "timed out", related)
                raise RequestCancelled(f"Request {message.get('method')!r} timed out")
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel(rid, "cancelled by the caller", related)
            raise
        finally:
            del self._pending[rid]
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
                await self._write(message, related)

    async def send_built(
        self,
        rid: RequestId,
        message: JSON,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> JSON:
        """Send a request message a Connection method built (its id known to the caller) and wait."""
        return await self._send_and_wait(rid, message, timeout, None, on_progress, None)

    def postpone(self, rid: RequestId) -> None:
        """Restart the timeout of our request `rid` from now, as the peer's progress would (the
        transport is still busy with it: the time is not the peer's)."""
        pending = self._pending.get(rid)
        if pending is not None and pending.scope is not None:
            pending.scope.deadline = min(anyio.current_time() + pending.timeout, pending.cap)

    async def _progressed(self, event: ev.ProgressReceived) -> None:
        pending = self._pending.get(event.request_id)
        if pending is None:
            return
        if pending.scope is not None:
            pending.scope.deadline = min(anyio.current_time() + pending.timeout, pending.cap)
        if pending.on_progress is not None:
            outcome = pending.on_progress(event.progress, event.total, event.message)
            if outcome is not None:
                await outcome

    def _fail_pending(self) -> None:
        for pending in self._pending.values():
            if not pending.done.is_set():
                pending.error = MCPError(CONNECTION_CLOSED, "Connection closed")
                pending.done.set()
