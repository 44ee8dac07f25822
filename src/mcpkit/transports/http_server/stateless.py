"""One 2026-07-28 (stateless) POST: checked headers, a fresh serve() for the one request, and its answer.

Spec 2026-07-28 transports "Streamable HTTP": no sessions and no resumability; the headers mirror the
body and any mismatch is 400 with HeaderMismatch; stateless errors travel with their status (400 for
version, _meta and capability errors, 404 for an unknown method). A request whose first message is
its response is answered as application/json, so such an error keeps its status; one that sends
notifications first (progress, logs, a subscriptions/listen stream) is answered as SSE, and closing
that stream cancels the request (patterns "Cancellation"). With `json_only` the rest is JSON, but a
request that asked for notifications (listen, a progressToken, a log level) is still SSE.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol, runtime_checkable

import anyio
import orjson

from ...protocol.errors import MCPError
from ...protocol.http_rules import asks_for_notifications
from ...protocol.http_stateless import check_request_headers, retry_after, status_for_error
from ...protocol.jsonrpc import Request, encode, error_message
from ...protocol.resource_auth import AccessToken
from ...protocol.sse import encode_event
from ...runtime.mailbox import Mailbox
from .asgi import JSON_HEADERS, respond, until_disconnect
from .exchange import Exchange
from .sessions import Item, Route, SessionStream
from .streams import write_sse

__all__ = [
    "HeaderMirror",
    "MirrorsHeaders",
    "NamesScopes",
    "answer_stateless",
    "header_mirror_of",
    "scopes_of",
]

HeaderMirror = Callable[[str], list[tuple[str, tuple[str, ...]]]]


@runtime_checkable
class MirrorsHeaders(Protocol):
    """A target that names its tools' `x-mcp-header` parameters (a Server does): the header each one
    is sent in and the path of the argument it mirrors, which a 2026-07-28 tools/call must match."""

    def mirrored_headers(self, tool: str) -> list[tuple[str, tuple[str, ...]]]: ...


def header_mirror_of(target: object) -> HeaderMirror:
    """The target's `mirrored_headers` if it is a MirrorsHeaders, else a mirror that finds none."""
    return target.mirrored_headers if isinstance(target, MirrorsHeaders) else (lambda _tool: [])


@runtime_checkable
class NamesScopes(Protocol):
    """A target that names the OAuth scopes a request needs (a Server does, from its items' `scopes`,
    of the items the caller holding `auth` sees)."""

    def scopes_for(
        self, method: str, params: dict[str, Any], auth: AccessToken | None = None
    ) -> frozenset[str]: ...


ScopesFor = Callable[[str, dict[str, Any], AccessToken | None], frozenset[str]]


def scopes_of(target: object) -> ScopesFor:
    """The target's `scopes_for` if it is a NamesScopes, else one that asks for none."""
    return (
        target.scopes_for
        if isinstance(target, NamesScopes)
        else (lambda _method, _params, _auth: frozenset())
    )


async def answer_stateless(
    run: Callable[[SessionStream], Coroutine[Any, Any, None]],
    mirror: HeaderMirror,
    exchange: Exchange,
    *,
    json_only: bool,
) -> None:
    """Check the request's headers against its body, serve it in a session of its own, and answer it."""
    message = exchange.message
    assert isinstance(message, Request)  # post_kind gives the stateless era only requests
    try:
        tool = message.params.get("name") if message.method == "tools/call" else None
        mirrors = mirror(tool) if isinstance(tool, str) else []
        check_request_headers(exchange.headers, message.method, message.params, mirrors, exchange.repeated)
    except MCPError as exc:
        await respond(exchange.send, 400, encode(error_message(message.id, exc.to_wire())), JSON_HEADERS)
        return
    session = SessionStream(None)
    route = session.open_route(message.id, False, None)
    receiver = route.attach()
    json_only = json_only and not asks_for_notifications(message.method, message.params)
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, session)
        await session.push(exchange.inbound, exchange.origin(session.session_id))
        answered = await _answer(route, receiver, exchange, json_only)
        session.close()  # the request is over (or the client left): serve() ends, cancelling what is left
        if not answered:
            tg.cancel_scope.cancel()


def _retry(status: int, response: bytes) -> list[tuple[bytes, bytes]]:
    """Retry-After for a busy (429) or unavailable (503) answer, from its error's `retryAfterMs`."""
    if status not in (429, 503):
        return []
    return [(b"retry-after", retry_after(orjson.loads(response).get("error")).encode())]


async def _answer(route: Route, receiver: Mailbox[Item], exchange: Exchange, json_only: bool) -> bool:
    """The response as JSON when it comes first (or with `json_only`, dropping what came before it),
    else an SSE stream of everything up to it. False if the client left before it went out."""
    async with until_disconnect(exchange.receive) as gone:
        first = await receiver.get()
        if first.final or json_only:
            while not first.final:  # JSON has no room for notifications; they are dropped
                first = await receiver.get()
            status = status_for_error(first.error_code) if first.error_code is not None else 200
            await respond(exchange.send, status, first.data, JSON_HEADERS + _retry(status, first.data))
            return True
    if gone.is_set():
        return False
    return await write_sse(route, receiver, exchange, first=encode_event(first.data))
