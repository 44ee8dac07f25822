"""Writing one session's messages into HTTP responses: an SSE stream (a POST's, the GET one, a resumed
one) or a single JSON answer. A stream is attached to its Route before the request that feeds it is
handed to `serve`, so no message can slip past it."""

from __future__ import annotations

import anyio.lowlevel

from ...protocol.http_rules import SESSION_NOT_FOUND, HTTPRefusal, parse_event_id
from ...protocol.jsonrpc import RequestId, encode, error_response
from ...protocol.sse import encode_event
from ...runtime.mailbox import Mailbox
from .asgi import JSON_HEADERS, SSE_HEADERS, respond, until_disconnect
from .event_store import EventStore, Replay, UnknownEventId
from .exchange import Exchange
from .sessions import STANDALONE, Item, Route, SessionStream

__all__ = ["prime", "reply_json", "reply_whole", "resume", "stream_standalone", "write_sse"]


async def prime(session: SessionStream, route: Route) -> bytes:
    """The id-only priming event a stream opens with from 2025-11-25 (recorded, so it can be resumed
    from), or nothing."""
    if route.prime_retry_ms is None:
        return b""
    event_id = await session.record_priming(route.stream_id)
    return encode_event(b"", event_id=event_id, retry_ms=route.prime_retry_ms)


def take_backlog(session: SessionStream) -> bytes:
    """The standalone events that waited for a GET stream, as SSE."""
    backlog, session.backlog = session.backlog or (), None
    return b"".join(encode_event(item.data, event_id=item.event_id) for item in backlog)


async def write_sse(
    route: Route,
    receiver: Mailbox[Item],
    exchange: Exchange,
    *,
    first: bytes = b"",
    replay: Replay | None = None,
) -> bool:
    """Start an SSE response: `first`, then the replayed events, then each live message until the one that
    ends the stream, the stream's end, or the client's disconnect. Detaches `receiver` in every case.
    True if the message that ends the stream went out."""
    ended = False  # the event that ends the stream also ends the body: one write, not two
    send = exchange.send
    try:
        headers = SSE_HEADERS + exchange.response_headers
        ready = await settled(receiver) if replay is None else []
        if ready:
            first += b"".join(encode_event(item.data, event_id=item.event_id) for item in ready)
            if ready[-1].final:  # the whole stream: one body of known length, no disconnect watcher
                await respond(send, 200, first, headers)
                return True
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async with until_disconnect(exchange.receive):
            replayed = set()
            for event_id, data in replay.events if replay else ():
                replayed.add(event_id)
                if data:  # priming events are not repeated
                    first += encode_event(data, event_id=event_id)
            if first:
                await send({"type": "http.response.body", "body": first, "more_body": True})
            async for item in receiver:
                if item.event_id in replayed:
                    continue
                event = encode_event(item.data, event_id=item.event_id)
                ended = item.final
                await send({"type": "http.response.body", "body": event, "more_body": not ended})
                if ended:
                    break
    finally:
        route.detach(receiver)
    if not ended:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    return ended


async def settled(receiver: Mailbox[Item]) -> list[Item]:
    """What the request's handler sent once it had its first turn: all of it, for a handler that never
    suspends. The POST waits that one turn anyway; taking it before watching for a disconnect spares a
    watcher task for most requests (on Python 3.12+ the handler ran eagerly and no turn is needed)."""
    if not len(receiver):
        await anyio.lowlevel.checkpoint()
    return receiver.take_ready()


async def reply_whole(
    session: SessionStream, receiver: Mailbox[Item], exchange: Exchange, first: bytes
) -> None:
    """Answer with the request's SSE stream in one body, once its response is there: an initialize's, so
    the Mcp-Session-Id goes out only with the InitializeResult (transports "Session Management"), and a
    session that failed before it (`failure`: a cluster's store refused it) is refused as an HTTP error
    (which `failure` becomes) instead of an empty stream naming a session nobody keeps."""
    items = await settled(receiver)
    if not (items and items[-1].final):
        async with until_disconnect(exchange.receive) as gone:
            async for item in receiver:
                items.append(item)
                if item.final:
                    break
        if gone.is_set():
            return
    if not (items and items[-1].final) and session.failure is not None:
        raise session.failure
    body = first + b"".join(encode_event(item.data, event_id=item.event_id) for item in items)
    await respond(exchange.send, 200, body, SSE_HEADERS + exchange.response_headers)


async def reply_json(
    session: SessionStream, receiver: Mailbox[Item], rid: RequestId, exchange: Exchange
) -> None:
    """Answer with the response as application/json; messages before it go to the standalone stream,
    as a JSON answer has no room for them. A request cancelled meanwhile gets no response (utilities
    "Cancellation"), so its POST is answered with an SSE stream that ends at once (a request's POST is
    JSON or SSE, never 202); one whose session ended meanwhile gets 404, as its next request would, or
    the session's `failure` raised."""
    response = None
    for item in await settled(receiver):
        if item.final:
            response = item.data
        else:
            await session.send_standalone(item.data)
    if response is None:
        async with until_disconnect(exchange.receive) as gone:
            async for item in receiver:
                if item.final:
                    response = item.data
                    break
                await session.send_standalone(item.data)
        if gone.is_set():
            receiver.discard()
            return
    receiver.discard()
    send, extra = exchange.send, exchange.response_headers
    if response is None and session.failure is not None:
        raise session.failure
    if response is None and session.closed:
        ended = error_response(rid, SESSION_NOT_FOUND, "Session not found: it ended before the response")
        await respond(send, 404, encode(ended), JSON_HEADERS + extra)
    elif response is None:
        await respond(send, 200, b"", SSE_HEADERS + extra)
    else:
        await respond(send, 200, response, JSON_HEADERS + extra)


async def stream_standalone(session: SessionStream, retry_ms: int | None, exchange: Exchange) -> None:
    """The session's standalone GET stream: what waited for it, then each message as it comes."""
    route = session.standalone
    if route.attached:
        raise HTTPRefusal(409, "Conflict: this session already has a standalone stream")
    route.prime_retry_ms = retry_ms
    receiver = route.attach()
    try:
        first = take_backlog(session) + await prime(session, route)
        await write_sse(route, receiver, exchange, first=first)
    finally:
        route.detach(receiver)


async def resume(session: SessionStream, store: EventStore, last_event_id: str, exchange: Exchange) -> None:
    """Replay what followed `last_event_id` on the stream it names, then that stream live while it is open.

    An id that is malformed, was not issued in this session, or whose successors were dropped is 400
    (not 404, which would tell the client its session is gone).
    """
    parsed = parse_event_id(last_event_id)
    if parsed is None or session.session_id is None:
        raise HTTPRefusal(400, f"Bad Request: malformed Last-Event-ID {last_event_id!r}")
    stream_id = parsed[0]
    route = session.standalone if stream_id == STANDALONE else session.streams.get(stream_id)
    if route is None:  # that stream has ended: replay only
        route = Route(stream_id)
        route.finish()
    # attached before reading the store, so nothing sent meanwhile is missed; duplicates are skipped
    receiver = route.attach()
    try:
        try:
            replay = await store.replay_after(session.session_id, last_event_id)
        except UnknownEventId as exc:
            raise HTTPRefusal(400, f"Bad Request: {exc}") from None
        if route is session.standalone:
            session.backlog = None  # all stored, so in the replay where the client has not seen them
        await write_sse(route, receiver, exchange, replay=replay)
    finally:
        route.detach(receiver)
