"""One 2026-07-28 (stateless) POST: checked headers, a fresh serve() for the one request, and its answer.

Spec 2026-07-28 transports "Streamable HTTP": no sessions and no resumability; the headers mirror the
body and any mismatch is 400 with HeaderMismatch; modern errors travel with their status (400 for
version, _meta and capability errors, 404 for an unknown method). A request whose first message is
its response is answered as application/json, so such an error keeps its status; one that sends
notifications first (progress, logs, a subscriptions/listen stream) is answered as SSE, and closing
that stream cancels the request (patterns "Cancellation"). With `json_only` the rest is JSON, but a
request that asked for notifications (listen, a progressToken, a log level) is still SSE.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import orjson

from ..protocol.errors import MCPError
from ..protocol.http_modern import check_request_headers, status_for_error
from ..protocol.http_rules import asks_for_notifications
from ..protocol.jsonrpc import Request, encode, error_message
from ..protocol.sse import encode_event
from .http_asgi import JSON_HEADERS, SSE_HEADERS, Receive, Send, respond, until_disconnect
from .http_sessions import SessionStream

__all__ = ["answer_stateless", "mirrored_for"]

Mirrored = Callable[[str], list[tuple[str, tuple[str, ...]]]]


def mirrored_for(target: Any) -> Mirrored:
    """The target's `x-mcp-header` lookup (a Server has one), or one that finds none."""
    found = getattr(target, "mirrored_headers", None)
    return found if callable(found) else (lambda _tool: [])


async def answer_stateless(
    run: Callable[[SessionStream], Coroutine[Any, Any, None]],
    mirrored: Mirrored,
    headers: dict[str, str],
    message: Request,
    body: bytes,
    receive: Receive,
    send: Send,
    *,
    json_only: bool,
    repeated: frozenset[str] = frozenset(),
) -> None:
    try:
        tool = message.params.get("name") if message.method == "tools/call" else None
        params, method = message.params, message.method
        mirrors = mirrored(tool) if isinstance(tool, str) else []
        check_request_headers(headers, method, params, mirrors, repeated)
    except MCPError as exc:
        await respond(send, 400, encode(error_message(message.id, exc.to_wire())), JSON_HEADERS)
        return
    session = SessionStream(None)
    route = session.open_route(message.id, False, None)
    receiver = route.attach()
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, session)
        await session.push(body)
        async with until_disconnect(receive) as gone:
            first = await receiver.get()
            if first.final or (json_only and not asks_for_notifications(message.method, message.params)):
                while not first.final:  # JSON has no room for notifications; they are dropped
                    first = await receiver.get()
                await respond(send, _status(first.data), first.data, JSON_HEADERS)
            else:
                await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                item = first
                while True:  # the response's event also ends the body
                    event = encode_event(item.data)
                    await send({"type": "http.response.body", "body": event, "more_body": not item.final})
                    if item.final:
                        break
                    item = await receiver.get()
        session.close()  # the request is over (or the client left): serve() ends, cancelling what is left
        if gone.is_set():
            tg.cancel_scope.cancel()


def _status(response: bytes) -> int:
    if b'"error"' not in response:
        return 200  # a result: no need to parse it again
    error = orjson.loads(response).get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return status_for_error(code) if isinstance(code, int) else 200
