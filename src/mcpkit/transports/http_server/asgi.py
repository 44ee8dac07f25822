"""The ASGI vocabulary the Streamable HTTP server needs: types, plain responses, bodies, disconnects."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from ...protocol.errors import INTERNAL_ERROR
from ...protocol.http_rules import HTTPRefusal
from ...protocol.jsonrpc import encode, error_response
from ...protocol.resource_auth import AuthRefusal
from ...runtime._native import running_loop, within

__all__ = [
    "AUTH_SCOPE_KEY",
    "JSON_HEADERS",
    "SSE_HEADERS",
    "ASGIMessage",
    "Disconnected",
    "Receive",
    "Scope",
    "Send",
    "endpoint_path",
    "handle",
    "read_body",
    "refuse",
    "respond",
    "until_disconnect",
]

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
Send = Callable[[ASGIMessage], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

log = logging.getLogger("mcpkit.transports.http_server")

SSE_HEADERS: Headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
JSON_HEADERS: Headers = [(b"content-type", b"application/json")]
# Where mcpkit.auth.protect() leaves the verified AccessToken in the scope of the app it wraps.
AUTH_SCOPE_KEY = "mcpkit.auth"


class Disconnected(Exception):
    """The client went away before the request body arrived."""


async def handle(
    route: Callable[[Scope, Receive, Send], Awaitable[None]], scope: Scope, receive: Receive, send: Send
) -> None:
    """Run `route` for one request: a refusal becomes its status and JSON-RPC error, a client gone before
    its body arrived ends it quietly, and any other failure is logged and, if no response started, a 500."""
    started = False

    async def tracked(message: ASGIMessage) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await route(scope, receive, tracked)
    except HTTPRefusal as refusal:
        await refuse(send, refusal)
    except AuthRefusal:
        if started:
            log.exception("authorization refused after the response started")
            return
        raise  # worded by mcpkit.auth.protect, which put the token in the scope
    except Disconnected:
        pass
    except Exception:
        log.exception("Streamable HTTP request failed")
        if not started:
            body = encode(error_response(None, INTERNAL_ERROR, "Internal error"))
            await respond(send, 500, body, JSON_HEADERS)


def endpoint_path(scope: Scope) -> str:
    """The request's path below the app's mount point (`root_path`)."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


async def respond(send: Send, status: int, body: bytes, headers: Headers) -> None:
    """A whole response: its length declared, so the server need not chunk it (none for a 204)."""
    if status != 204:
        headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def refuse(send: Send, refusal: HTTPRefusal) -> None:
    """The status and JSON-RPC error body of a refused request (no id unless the refusal names it)."""
    extra = [(k.replace("_", "-").encode(), v.encode()) for k, v in refusal.headers.items()]
    body = encode(error_response(refusal.rid, refusal.code, refusal.message, refusal.data))
    await respond(send, refusal.status, body, JSON_HEADERS + extra)


async def read_body(headers: dict[str, str], receive: Receive, max_body: int, timeout: float) -> bytes:
    """The whole request body: 413 past `max_body` bytes (declared or streamed), 408 after `timeout`."""
    declared = headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > max_body):
        raise HTTPRefusal(413, f"Content Too Large: the limit is {max_body} bytes")
    try:
        async with within(timeout):
            return await _read_chunks(receive, max_body)
    except TimeoutError:
        raise HTTPRefusal(408, f"Request Timeout: body not received within {timeout} s") from None


async def _read_chunks(receive: Receive, max_body: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_body:
            raise HTTPRefusal(413, f"Content Too Large: the limit is {max_body} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@asynccontextmanager
async def until_disconnect(receive: Receive) -> AsyncIterator[anyio.Event]:
    """Run the body until it finishes or the client goes away; the event says which."""
    gone = anyio.Event()
    failed: list[BaseException] = []

    async def watch(scope: anyio.CancelScope) -> None:
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        except Exception as exc:  # re-raised in the request's task, as a task group would
            failed.append(exc)
        gone.set()
        scope.cancel()

    loop = running_loop()
    if loop is None:  # not asyncio: a task group hosts the watcher
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, tg.cancel_scope)
            yield gone
            tg.cancel_scope.cancel()
    else:
        # A bare task and one cancel scope: a task group per request cost more than the request.
        with anyio.CancelScope() as scope:
            watcher = loop.create_task(watch(scope))
            try:
                yield gone
            finally:
                watcher.cancel()
    if failed:
        raise failed[0]
