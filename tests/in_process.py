"""An ASGI app driven in this process, on whichever event loop runs the test: each httpx request is handed to
the app as it comes, and its response streamed back as the app sends it. (httpx.ASGITransport waits for the
whole body, which an SSE stream that stays open never finishes.) The app gets no lifespan, as under a router
that does not forward it, so it hosts its own session tasks."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpkit.client.client import Client
from mcpkit.transports.http_client import HTTPClientStream

ORIGIN = "http://127.0.0.1:8000"


@asynccontextmanager
async def in_process(app: Any, timeout: float = 5) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client whose requests to ORIGIN reach `app`; `app.aclose()` runs at the end if it has one."""
    try:
        async with anyio.create_task_group() as tg:
            transport = Driver(app, tg)
            async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, timeout=timeout) as client:
                yield client
            tg.cancel_scope.cancel()  # exchanges still running: their clients are gone
    finally:
        if hasattr(app, "aclose"):
            await app.aclose()


@asynccontextmanager
async def client_in_process(app: Any, **options: Any) -> AsyncIterator[Client]:
    """mcpkit's Streamable HTTP client to `app` driven in this process (`options` go to Client)."""
    async with in_process(app, options.get("timeout") or 30) as http, anyio.create_task_group() as tg:
        stream = HTTPClientStream(ORIGIN + "/mcp", http, tg)
        try:
            async with Client(stream, **options) as client:
                yield client
        finally:
            await stream.aclose()
            tg.cancel_scope.cancel()


class Driver(httpx.AsyncBaseTransport):
    def __init__(self, app: Any, tg: TaskGroup) -> None:
        self._app = app
        self._tg = tg

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        exchange = Exchange(request.stream.__aiter__())
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "server": (request.url.host, request.url.port),
            "client": ("127.0.0.1", 50000),
        }
        self._tg.start_soon(exchange.run, self._app, scope)
        await exchange.started.wait()
        return httpx.Response(exchange.status, headers=exchange.headers, stream=Body(exchange))


class Exchange:
    """One request's ASGI receive and send, and the response body as the app writes it."""

    def __init__(self, body: AsyncIterator[bytes]) -> None:
        self._body: AsyncIterator[bytes] | None = body
        self.started = anyio.Event()
        self.gone = anyio.Event()  # the client closed the response: the app's next receive is a disconnect
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []
        self.writer: MemoryObjectSendStream[bytes]
        self.writer, self.reader = anyio.create_memory_object_stream[bytes](math.inf)

    async def run(self, app: Any, scope: dict[str, Any]) -> None:
        try:
            await app(scope, self.receive, self.send)
        finally:
            self.writer.close()
            self.started.set()

    async def receive(self) -> dict[str, Any]:
        """The request body chunk by chunk as the client sends it; then, once the client is gone, a
        disconnect."""
        if self._body is not None:
            try:
                return {"type": "http.request", "body": await anext(self._body), "more_body": True}
            except StopAsyncIteration:
                self._body = None
                return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status, self.headers = message["status"], list(message.get("headers", []))
            self.started.set()
        elif message["type"] == "http.response.body":
            if message.get("body") and not self.gone.is_set():
                self.writer.send_nowait(message["body"])
            if not message.get("more_body", False):
                self.writer.close()


class Body(httpx.AsyncByteStream):
    def __init__(self, exchange: Exchange) -> None:
        self._exchange = exchange
        self._reader: MemoryObjectReceiveStream[bytes] = exchange.reader

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._reader:
            yield chunk

    async def aclose(self) -> None:
        self._exchange.gone.set()
        self._reader.close()
