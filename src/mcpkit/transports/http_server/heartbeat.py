"""SSE heartbeats: a comment line on every SSE response (a POST's or a GET stream) that has been idle for a
period, so proxies that cut idle connections leave long streams open. One ticker for all of them, so a
request pays for no task of its own."""

from __future__ import annotations

from contextlib import suppress

import anyio

from .asgi import ASGIMessage, Send

__all__ = ["TRACKED_SCOPE_KEY", "Heartbeats", "Tracked"]

# where the app leaves a request's Tracked send in its scope, for the GET stream that ends with a drain
TRACKED_SCOPE_KEY = "mcpkit.tracked"
COMMENT = b": keep-alive\n\n"  # clients ignore comments; proxies see traffic


class Tracked:
    """An ASGI send that knows whether its response started, is SSE, wrote lately, and ended."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.sse = False
        self.ended = False
        self.wrote = False
        self.writing = False
        self._beating: anyio.Event | None = None

    async def __call__(self, message: ASGIMessage) -> None:
        while self._beating is not None:  # a heartbeat is being written: after it, in order
            await self._beating.wait()
        if self.ended:
            return
        if message["type"] == "http.response.start":
            self.started = True
            self.sse = (b"content-type", b"text/event-stream") in message.get("headers", ())
        elif not message.get("more_body", False):
            self.ended = True  # before the write, so no heartbeat follows the body's end
        self.wrote = self.writing = True
        try:
            await self._send(message)
        finally:
            self.writing = False

    async def beat(self) -> None:
        """A comment, unless the response is not an open SSE stream or is writing now."""
        if not self.sse or self.ended or self.writing:
            return
        self._beating = beating = anyio.Event()
        try:
            await self._send({"type": "http.response.body", "body": COMMENT, "more_body": True})
        finally:
            self._beating = None
            beating.set()


class Heartbeats:
    def __init__(self, every: float | None) -> None:
        self.every = every
        self._open: set[Tracked] = set()

    def open(self, send: Send) -> Tracked:
        """`send`, tracked until `close`."""
        tracked = Tracked(send)
        self._open.add(tracked)
        return tracked

    def close(self, tracked: Tracked) -> None:
        self._open.discard(tracked)

    async def run(self) -> None:
        """Every period, a comment on each SSE response that wrote nothing since the last one."""
        if self.every is None:
            return
        while True:
            await anyio.sleep(self.every)
            for tracked in list(self._open):
                if tracked.wrote:
                    tracked.wrote = False
                    continue
                # a client that reads nothing holds up no other; one gone meanwhile ends its own request
                with anyio.move_on_after(self.every), suppress(Exception):
                    await tracked.beat()
