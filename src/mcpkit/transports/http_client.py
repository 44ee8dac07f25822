"""Streamable HTTP, client side: each message is POSTed; answers come back as JSON or as an SSE stream.

Spec: transports "Streamable HTTP" (2025-11-25). The client sends Mcp-Session-Id once the server
gave one and MCP-Protocol-Version once negotiated, listens on a GET stream for server-initiated
messages, reconnects a dropped stream with Last-Event-ID, and ends the session with DELETE.
A failed POST of a request becomes a JSON-RPC error for that request, so the caller sees it.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import httpx
import orjson
from anyio.abc import TaskGroup

from ..protocol.errors import CONNECTION_CLOSED
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import RequestId, encode, error_message
from ..protocol.sse import SSEDecoder
from ..runtime.groups import single_error

__all__ = ["HTTPClientStream", "open_http_stream"]

_DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024


class HTTPClientStream:
    """A MessageStream over Streamable HTTP. Create it with `open_http_stream`."""

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        tg: TaskGroup,
        *,
        max_message: int = _DEFAULT_MAX_MESSAGE,
        reconnect_attempts: int = 3,
    ) -> None:
        self.url = url
        self.http = http
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.max_message = max_message
        self.reconnect_attempts = reconnect_attempts
        self._tg = tg
        self._in_send, self._in_receive = anyio.create_memory_object_stream[bytes | Oversized](math.inf)
        self._listening = False

    async def receive(self) -> bytes | Oversized:
        try:
            return await self._in_receive.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise anyio.EndOfStream from None

    async def send(self, data: bytes, related: RequestId | None = None) -> None:
        message = orjson.loads(data)
        self._tg.start_soon(self._post, data, message)

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    async def _post(self, data: bytes, message: dict[str, Any]) -> None:
        headers = self._headers("application/json, text/event-stream")
        headers["Content-Type"] = "application/json"
        is_request = "method" in message and "id" in message
        try:
            async with self.http.stream("POST", self.url, content=data, headers=headers) as response:
                if response.status_code == 202:
                    return
                if response.status_code >= 400:
                    body = (await response.aread())[:500].decode(errors="replace")
                    self._fail(message, f"HTTP {response.status_code} from the server: {body}".strip())
                    return
                session_id = response.headers.get("mcp-session-id")
                if session_id:
                    self.session_id = session_id
                await self._read_body(response, initialize=message.get("method") == "initialize")
        except httpx.HTTPError as exc:
            if is_request:
                self._fail(message, f"HTTP request failed: {type(exc).__name__}: {exc}")

    async def _read_body(self, response: httpx.Response, initialize: bool) -> None:
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            await self._read_events(response)
            return
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_message:
                await self._deliver(Oversized(self.max_message))
                return
        if body:
            if initialize:
                self._learn_version(bytes(body))
            await self._deliver(bytes(body))

    async def _read_events(self, response: httpx.Response) -> str | None:
        decoder = SSEDecoder(self.max_message)
        last_id: str | None = None
        async for chunk in response.aiter_bytes():
            try:
                events = decoder.feed(chunk)
            except ValueError:
                await self._deliver(Oversized(self.max_message))
                return last_id
            for event in events:
                last_id = event.id or last_id
                if event.data:
                    payload = event.data.encode()
                    self._learn_version(payload)
                    await self._deliver(payload)
        return last_id

    def _learn_version(self, payload: bytes) -> None:
        if self.protocol_version is not None:
            return
        try:
            result = orjson.loads(payload).get("result", {})
        except (orjson.JSONDecodeError, AttributeError):
            return
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self.protocol_version = version
            if not self._listening:
                self._listening = True
                self._tg.start_soon(self._listen)

    async def _listen(self) -> None:
        """The standalone GET stream for server-initiated messages; 405 means the server offers none."""
        last_id: str | None = None
        for _ in range(self.reconnect_attempts + 1):
            headers = self._headers("text/event-stream")
            if last_id:
                headers["Last-Event-ID"] = last_id
            try:
                async with self.http.stream("GET", self.url, headers=headers, timeout=None) as response:
                    if response.status_code != 200:
                        return
                    last_id = await self._read_events(response) or last_id
            except httpx.HTTPError:
                await anyio.sleep(0.5)

    def _fail(self, message: dict[str, Any], text: str) -> None:
        rid = message.get("id")
        if "method" in message and isinstance(rid, str | int):
            error = {"code": CONNECTION_CLOSED, "message": text}
            self._in_send.send_nowait(encode(error_message(rid, error)))

    async def _deliver(self, payload: bytes | Oversized) -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._in_send.send(payload)

    async def aclose(self) -> None:
        if self.session_id:
            with anyio.move_on_after(2, shield=True):
                with suppress(httpx.HTTPError):
                    await self.http.delete(self.url, headers=self._headers("application/json"))
        self._in_send.close()


@asynccontextmanager
async def open_http_stream(
    url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0, **options: Any
) -> AsyncIterator[HTTPClientStream]:
    """A Streamable HTTP MessageStream to `url`; the session is DELETEd on exit."""
    with single_error():
        async with (
            httpx.AsyncClient(headers=headers, timeout=timeout) as http,
            anyio.create_task_group() as tg,
        ):
            stream = HTTPClientStream(url, http, tg, **options)
            try:
                yield stream
            finally:
                await stream.aclose()
                tg.cancel_scope.cancel()
