"""The 2024-11-05 HTTP+SSE transport, client side: one GET stream in, a POST per message out.

Spec: 2024-11-05 transports "HTTP with SSE". The client GETs the SSE URL; the server's first event
is `endpoint`, whose data is the URL (maybe relative) to POST messages to; every server message
then arrives as a `message` event on that one stream. When the stream ends, the connection ends.
Streamable HTTP clients fall back to it (2025-03-26+ "Backwards Compatibility"). An endpoint
outside the SSE URL's origin is refused: the POSTs carry the client's headers and credentials.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup, TaskStatus

from ...protocol.framing import Oversized
from ...protocol.sse import SSEDecoder
from ...runtime.groups import CallerCancellation, single_error
from ...runtime.stream import Attributes, Deliver, Inbox, Outgoing, deliver_each
from .failures import describe_error, describe_status, describe_unexpected, error_reply, read_head

__all__ = [
    "LegacyEndpointError",
    "LegacySSEStream",
    "connect_legacy",
    "long_lived",
    "open_legacy_sse_stream",
    "same_origin_endpoint",
]

_DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024


class LegacyEndpointError(Exception):
    """The URL offered no HTTP+SSE stream, or the stream sent no `endpoint` event first."""


class LegacySSEStream(Attributes):
    """A MessageStream over HTTP+SSE. `connect()` opens the stream; `open_legacy_sse_stream` does both.

    `inbox` lets another transport (Streamable HTTP falling back) keep its own receive side.
    """

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        tg: TaskGroup,
        *,
        max_message: int = _DEFAULT_MAX_MESSAGE,
        inbox: Inbox[Any] | None = None,
        connect_timeout: float = 30.0,
    ) -> None:
        self.url = url
        self.http = http
        self.max_message = max_message
        self.connect_timeout = connect_timeout
        self.endpoint: str | None = None
        self._tg = tg
        self._inbox: Inbox[Any] = inbox if inbox is not None else Inbox[bytes | Oversized]()
        self._scope = anyio.CancelScope()

    async def connect(self) -> None:
        """GET the SSE URL and wait for its `endpoint` event; raises LegacyEndpointError or httpx errors."""
        with anyio.fail_after(self.connect_timeout):
            await self._tg.start(self._run)

    async def _run(self, *, task_status: TaskStatus[None]) -> None:
        headers = {"Accept": "text/event-stream"}
        with self._scope:
            async with self.http.stream("GET", self.url, headers=headers, timeout=long_lived(self.http)) as r:
                if r.status_code != 200:
                    raise LegacyEndpointError(describe_status(r, await read_head(r)))
                if not r.headers.get("content-type", "").startswith("text/event-stream"):
                    kind = r.headers.get("content-type")
                    raise LegacyEndpointError(f"GET {self.url} answered {kind!r}, not an SSE stream")
                with suppress(httpx.HTTPError):
                    await self._read(r, task_status)
        if self.endpoint is None:
            raise LegacyEndpointError(f"GET {self.url} ended before sending an `endpoint` event")
        self._inbox.end()

    async def _read(self, response: httpx.Response, task_status: TaskStatus[None]) -> None:
        decoder = SSEDecoder(self.max_message)
        async for chunk in response.aiter_bytes():
            try:
                events = decoder.feed(chunk)
            except ValueError:
                await self._deliver(Oversized(self.max_message))
                return
            for event in events:
                if self.endpoint is None:
                    if event.event != "endpoint":
                        raise LegacyEndpointError(f"the first SSE event was {event.event!r}, not 'endpoint'")
                    self.endpoint = same_origin_endpoint(response.url, event.data.strip())
                    task_status.started()
                elif event.event == "message":
                    await self._deliver(event.data.encode())

    async def deliver_to(self, deliver: Deliver) -> None:
        await deliver_each(self._inbox, deliver)

    async def send(self, out: Outgoing) -> None:
        self._tg.start_soon(self._post, out)

    async def _post(self, out: Outgoing) -> None:
        assert self.endpoint is not None, "connect() first"
        data = out.data
        headers = {"Content-Type": "application/json"}
        text: str | None = None
        failed = False
        try:
            async with self.http.stream("POST", self.endpoint, content=data, headers=headers) as response:
                if response.status_code >= 400:
                    text = describe_status(response, await read_head(response))
                elif not 200 <= response.status_code < 300:  # a redirect is not followed
                    head = await read_head(response)
                    text = describe_unexpected(response, head, "the message was not accepted")
        except httpx.HTTPError as exc:
            text, failed = describe_error(exc, "POST", self.endpoint), True
        if text is not None:
            reply = error_reply(out.decoded, text, failed)
            if reply is not None:
                await self._deliver(reply)

    async def _deliver(self, payload: bytes | Oversized) -> None:
        self._inbox.put(payload)

    async def aclose(self) -> None:
        self._scope.cancel()
        self._inbox.end()


async def connect_legacy(
    url: str,
    http: httpx.AsyncClient,
    tg: TaskGroup,
    inbox: Inbox[Any],
    max_message: int,
) -> LegacySSEStream:
    """A connected HTTP+SSE stream feeding `inbox` (a Streamable client falling back); any failure
    is a LegacyEndpointError with a readable message."""
    timeout = http.timeout.connect or 30.0
    legacy = LegacySSEStream(url, http, tg, max_message=max_message, inbox=inbox, connect_timeout=timeout)
    try:
        await legacy.connect()
    except httpx.HTTPError as exc:
        raise LegacyEndpointError(describe_error(exc, "GET", url)) from exc
    except TimeoutError:
        raise LegacyEndpointError(f"GET {url} sent no `endpoint` event within {timeout} s") from None
    return legacy


def same_origin_endpoint(stream_url: httpx.URL, named: str) -> str:
    """The absolute URL of the `endpoint` event's data, which must share the SSE URL's origin.

    Every message, with the client's headers (Authorization among them), is POSTed there: a
    server must not be able to send them to another scheme, host or port (RFC 6454 origin).
    """
    endpoint = stream_url.join(named)
    if _origin(endpoint) != _origin(stream_url):
        raise LegacyEndpointError(
            f"the `endpoint` event names {named!r}, outside the origin of {stream_url} "
            f"({_origin_text(stream_url)}); messages are only sent to the SSE URL's own origin"
        )
    return str(endpoint)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host.lower(), url.port if url.port is not None else default


def _origin_text(url: httpx.URL) -> str:
    scheme, host, port = _origin(url)
    return f"{scheme}://{host}:{port}"


def long_lived(http: httpx.AsyncClient) -> httpx.Timeout:
    """The client's timeouts, except that a long-lived stream may stay quiet indefinitely."""
    timeout = http.timeout
    return httpx.Timeout(timeout.connect, read=None, write=timeout.write, pool=timeout.pool)


@asynccontextmanager
async def open_legacy_sse_stream(
    url: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0, **options: Any
) -> AsyncIterator[LegacySSEStream]:
    """An HTTP+SSE (2024-11-05) MessageStream to the SSE URL `url`."""
    cancelled = CallerCancellation()
    with single_error():
        async with (
            httpx.AsyncClient(headers=headers, timeout=timeout) as http,
            anyio.create_task_group() as tg,
        ):
            stream = LegacySSEStream(url, http, tg, connect_timeout=timeout, **options)
            await stream.connect()
            try:
                with cancelled.noting():
                    yield stream
            finally:
                await stream.aclose()
                tg.cancel_scope.cancel()
        cancelled.reraise()
