"""Handing one POSTed message to a session's `serve` and answering its POST.

A notification or a response is accepted with 202. A request is answered with an SSE stream of what the
server sends for it, or as JSON (`json_response`) unless it asked for notifications. A message to a server
keeping no sessions is served in a session of its own that ends with it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from time import monotonic
from typing import Any

import anyio

from ...protocol.http_rules import HTTPRefusal, asks_for_notifications
from ...protocol.jsonrpc import Notification, Request
from ...protocol.utilities import read_cancel
from ...protocol.versions import Feature, has
from .asgi import respond
from .exchange import Exchange
from .sessions import SessionStream
from .streams import prime, reply_json, reply_whole, write_sse

__all__ = ["Answering", "deliver", "serve_alone"]


@dataclass(frozen=True, slots=True)
class Answering:
    """How requests are answered: as JSON when `json_response` (unless notifications were asked for),
    and with an SSE stream that opens with `retry_ms` from 2025-11-25 otherwise."""

    json_response: bool
    retry_ms: int

    def retry_for(self, version: str) -> int | None:
        return self.retry_ms if has(version, Feature.SSE_PRIMING) else None


async def deliver(session: SessionStream, exchange: Exchange, how: Answering) -> None:
    """Hand the exchange's message to `session` and answer the POST."""
    session.last_seen = monotonic()
    message = exchange.message
    if not isinstance(message, Request):
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            named = read_cancel(message.params)
            cancelled = session.routes.get(named[0]) if named is not None else None
            if named is not None and cancelled is not None:  # no response will come: its stream ends
                session.close_route(named[0], cancelled)
        await session.push(exchange.inbound, exchange.origin(session.session_id))
        await respond(exchange.send, 202, b"", [])
        return
    if message.id in session.routes:
        raise HTTPRefusal(400, f"Bad Request: request id {message.id!r} is already in flight")
    if message.method == "initialize":
        session.init_id = message.id
    with session.busy():
        await _answer(session, exchange, message, how)


async def _answer(session: SessionStream, exchange: Exchange, request: Request, how: Answering) -> None:
    """Hand the request to `serve` and answer it: an SSE stream, or JSON in json_response mode
    unless the request asked for notifications (a progressToken), which JSON has no room for."""
    sse = not how.json_response or asks_for_notifications(request.method, request.params)
    route = session.open_route(request.id, sse, how.retry_for(exchange.version) if sse else None)
    receiver = route.attach()
    try:
        first = await prime(session, route)
        try:
            await session.push(exchange.inbound, exchange.origin(session.session_id))
        except HTTPRefusal:
            session.close_route(request.id, route)
            raise
        if sse and request.method == "initialize":  # its session id with its result, not before
            await reply_whole(session, receiver, exchange, first)
        elif sse:
            await write_sse(route, receiver, exchange, first=first)
        else:
            await reply_json(session, receiver, request.id, exchange)
    finally:
        route.detach(receiver)
        if not sse:  # a stored stream outlives a dropped POST: the rest is kept for a resume
            session.close_route(request.id, route)


async def serve_alone(
    run: Callable[[SessionStream], Coroutine[Any, Any, None]], exchange: Exchange, how: Answering
) -> None:
    """Serve one message in a session of its own. Anything but an initialize is served at the
    exchange's version, which the session's `serve` takes as agreed (`pre_agreed`): no handshake."""
    message = exchange.message
    session = SessionStream(None)
    if not (isinstance(message, Request) and message.method == "initialize"):
        session.pre_agreed = exchange.version
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, session)
        await deliver(session, exchange, how)
        session.close()
