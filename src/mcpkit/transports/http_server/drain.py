"""Graceful drain: on SIGTERM (or `StreamableHTTPApp.drain()`) an app stops taking new work and lets what it
has finish before the ASGI server stops.

Draining: readiness is 503, a new session or GET stream is 503 with Retry-After, each open GET stream ends
with an SSE `retry:` hint so its client reconnects (elsewhere, behind a load balancer; with a backplane
the resumed stream continues there). Requests in flight run until done or until `drain_timeout`; past it
the app's session host answers every request still waiting with an error its client sees (in one
process its session ends: 404; with a backplane a JSON-RPC error, also stored for a resumption
elsewhere). Then the signal goes on to the ASGI server's own handler (uvicorn's), which stops listening
and shuts the app down. The listener stays open meanwhile, so a load balancer sees the 503 instead of
refused connections.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from types import FrameType

import anyio

from ...protocol.http_rules import HTTPRefusal
from ...runtime._native import running_loop
from .asgi import Send
from .heartbeat import Heartbeats, Tracked
from .probes import Probes

__all__ = ["Drain"]


class Drain:
    def __init__(self, probes: Probes, end_sessions: Callable[[], Awaitable[None]], retry_ms: int) -> None:
        self.probes = probes
        self.operations = probes.operations
        self._end_sessions = end_sessions
        self._retry_ms = retry_ms
        self._requested = anyio.Event()
        self._idle = anyio.Event()
        self._streams: set[anyio.CancelScope] = set()
        self.in_flight = 0
        self._forward: Callable[[], None] | None = None
        self.heartbeats = Heartbeats(probes.operations.heartbeat)

    def drain(self) -> None:
        """Begin draining (idempotent); `run` carries it out."""
        self.probes.draining = True
        self._requested.set()
        for scope in self._streams:
            scope.cancel()

    async def run(self) -> None:
        """While the app's lifespan runs: take SIGTERM as the start of a drain, and carry it out."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.heartbeats.run)
            await self._drained()
            tg.cancel_scope.cancel()

    async def _drained(self) -> None:
        with self._sigterm():
            await self._requested.wait()
            with anyio.move_on_after(self.operations.drain_timeout):
                if self.in_flight:
                    await self._idle.wait()
            if self.in_flight:
                await self._end_sessions()  # past the deadline: what still waits is answered with an error
                with anyio.move_on_after(1.0):
                    await self._idle.wait()
            if self._forward is not None:
                self._forward()

    @property
    def streams(self) -> int:
        """GET streams open now."""
        return len(self._streams)

    def refuse_new(self, what: str) -> None:
        if self.probes.draining:
            raise HTTPRefusal(503, f"Service Unavailable: draining, no new {what}", retry_after="1")

    # entered and left around each HTTP request: plain calls, as a context manager cost it microseconds
    def entered(self, send: Send) -> Tracked:
        """A request begins: counted while in flight, its response given heartbeats."""
        self.in_flight += 1
        return self.heartbeats.open(send)

    def left(self, tracked: Tracked) -> None:
        self.heartbeats.close(tracked)
        self.in_flight -= 1
        if not self.in_flight and self.probes.draining:
            self._idle.set()

    @asynccontextmanager
    async def stream(self, sent: Tracked) -> AsyncIterator[None]:
        """Around a GET stream (written through `sent`): a drain ends it with a `retry:` hint."""
        self.refuse_new("streams")
        with anyio.CancelScope() as scope:
            self._streams.add(scope)
            try:
                yield
            finally:
                self._streams.discard(scope)
        if self.probes.draining and sent.started and not sent.ended:
            hint = b"retry: %d\n\n" % self._retry_ms
            await sent({"type": "http.response.body", "body": hint, "more_body": False})

    @contextmanager
    def _sigterm(self) -> Iterator[None]:
        """SIGTERM starts the drain while this is entered (main thread, asyncio, when enabled); the
        ASGI server's own handler, found in place, is what `run` forwards to once drained."""
        loop = running_loop()
        if not self.operations.drain_on_sigterm or loop is None:
            yield
            return
        previous = signal.getsignal(signal.SIGTERM)

        def forward() -> None:
            if callable(previous):
                previous(signal.SIGTERM, None)

        def on_term(signum: int, frame: FrameType | None) -> None:
            if self._requested.is_set():
                forward()  # a second SIGTERM: stop now
            else:
                loop.call_soon_threadsafe(self.drain)

        try:
            signal.signal(signal.SIGTERM, on_term)
        except ValueError:  # not the main thread: the ASGI server stops as it would without a drain
            yield
            return
        self._forward = forward
        try:
            yield
        finally:
            if previous is not None and signal.getsignal(signal.SIGTERM) is on_term:
                signal.signal(signal.SIGTERM, previous)
