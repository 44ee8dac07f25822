"""The inspector's HTTP side, a bare ASGI app: the page and its files, the event stream (SSE) and one
POST per action; every request passes the Guard first."""

from __future__ import annotations

from importlib import resources
from typing import Any

import anyio
import orjson

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import JSON
from ..protocol.sse import encode_event
from .backend import ActionError, Backend, innermost
from .guard import Guard
from .hub import Hub

__all__ = ["InspectorApp"]

Scope = dict[str, Any]
Receive = Any
Send = Any

_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
# Nothing the server sends can become script: no inline script, no other origin, media only as data:.
_SECURITY = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"media-src data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # the token is in the page's URL
    (b"cache-control", b"no-store"),
]
_MAX_BODY = 16 * 1024 * 1024


def _static(name: str) -> bytes | None:
    folder = resources.files(__package__ or "mcpkit.inspector").joinpath("static")
    if "/" in name or name.startswith(".") or not any(name.endswith(s) for s in _TYPES):
        return None
    item = folder.joinpath(name)
    return item.read_bytes() if item.is_file() else None


async def _respond(send: Send, status: int, body: bytes, content_type: str) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + _SECURITY})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, value: Any) -> None:
    await _respond(send, status, orjson.dumps(value), "application/json")


async def _read_body(receive: Receive) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise anyio.EndOfStream
        body += message.get("body", b"")
        if len(body) > _MAX_BODY:
            raise ValueError("the request body is too large")
        if not message.get("more_body"):
            return bytes(body)


def _failure(exc: BaseException) -> tuple[int, JSON]:
    """The status and body for an action that failed: 409 the page's mistake, 502 the server's answer."""
    if isinstance(exc, ActionError):
        return 409, {"error": str(exc)}
    if isinstance(exc, MCPError):
        return 502, {"error": exc.message, "errorCode": exc.code, "errorData": exc.data}
    return 502, {"error": str(exc) or type(exc).__name__}


class InspectorApp:
    """ASGI: GET / (the page; ?token=), GET /static/NAME, GET /api/events (SSE), POST /api/ACTION."""

    def __init__(self, backend: Backend, hub: Hub, guard: Guard) -> None:
        self.backend = backend
        self.hub = hub
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refused = self.guard.refusal(method, path, scope.get("query_string", b""), headers)
        if refused is not None:
            await _respond(send, 403, refused.encode(), "text/plain; charset=utf-8")
            return
        if method == "GET" and path in ("/", "/index.html"):
            await _respond(send, 200, _static("index.html") or b"", "text/html; charset=utf-8")
        elif method == "GET" and path.startswith("/static/"):
            name = path.removeprefix("/static/")
            found = _static(name)
            kind = _TYPES.get(name[name.rfind(".") :], "")
            await _respond(send, 200 if found else 404, found or b"not found", kind or "text/plain")
        elif method == "GET" and path == "/api/events":
            await self.events(headers, receive, send)
        elif method == "POST" and path.startswith("/api/"):
            await self.action(path.removeprefix("/api/"), receive, send)
        else:
            await _respond(send, 404, b"not found", "text/plain")

    async def action(self, name: str, receive: Receive, send: Send) -> None:
        try:
            body = orjson.loads(await _read_body(receive) or b"{}")
        except anyio.EndOfStream:
            return
        except (ValueError, orjson.JSONDecodeError) as exc:
            await _json(send, 400, {"error": str(exc)})
            return
        if not isinstance(body, dict):
            await _json(send, 400, {"error": "the body is a JSON object"})
            return
        try:
            result = await self.backend.act(name, body)
        except Exception as exc:  # the page shows what went wrong; the inspector keeps running
            await _json(send, *_failure(innermost(exc)))
        else:
            await _json(send, 200, {"result": result})

    async def events(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        last = headers.get("last-event-id", "")  # EventSource sends it when it reconnects
        after = int(last) if last.isdigit() else 0
        start = [(b"content-type", b"text/event-stream"), (b"x-accel-buffering", b"no")]
        await send({"type": "http.response.start", "status": 200, "headers": start + _SECURITY})
        gone = False
        async with anyio.create_task_group() as tg, self.hub.listen(after) as events:

            async def until_gone() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                tg.cancel_scope.cancel()

            tg.start_soon(until_gone)
            await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
            async for event in events:
                data = encode_event(orjson.dumps(event), event_id=str(event["seq"]))
                await send({"type": "http.response.body", "body": data, "more_body": True})
            tg.cancel_scope.cancel()
        if not gone:  # the hub closed: the inspector is stopping
            await send({"type": "http.response.body", "body": b""})
