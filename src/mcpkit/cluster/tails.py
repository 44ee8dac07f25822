"""GET streams on a cluster worker: a resumption (Last-Event-ID) replays the session's shared log and
then tails it until its stream's response (at once when that is already stored); the standalone stream
tails the log's "get" stream for as long as the client holds it. A newer standalone GET anywhere takes
the stream over (the older one ends): the claim is in Redis, and what a GET read for delivery is never
read by the next one, so a message goes out on one stream only and a half-open connection never
blocks a new one.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from time import monotonic
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError

from ..protocol.errors import INTERNAL_ERROR
from ..protocol.http_rules import HTTPRefusal
from ..protocol.jsonrpc import JSON, RequestId, encode, error_response
from ..protocol.sse import encode_event
from ..protocol.utilities import log_params
from ..transports.http_server.asgi import SSE_HEADERS, until_disconnect
from ..transports.http_server.event_store import UnknownEventId
from ..transports.http_server.exchange import Exchange
from ..transports.http_server.sessions import STANDALONE
from .events import Event, HistoryLost, parse_id
from .list_changes import Views
from .signals import Wake
from .state import TakenOver

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken
    from .this_worker import ThisWorker

__all__ = ["Tails"]

_BACKLOG = 64  # standalone events kept for a new GET that names no Last-Event-ID, as in one process


@dataclass(eq=False)
class Held:
    """The standalone GET this worker holds for a session."""

    token: str
    viewer: AccessToken | None  # the token the GET came with: whose views its list_changed follow
    wake: Wake = field(default_factory=Wake)
    over: bool = False
    after: int | None = None  # the last event the GETs before it took (None: the session is gone)

    def end(self) -> None:
        self.over = True
        self.wake.set()


def _no_views(_viewer: AccessToken | None) -> Views | None:
    return None


class Tails:
    def __init__(
        self,
        here: ThisWorker[Any],
        poll: float = 1.0,
        views: Callable[[AccessToken | None], Views | None] = _no_views,
    ) -> None:
        """`views(viewer)`: what the viewer sees of each list here, with a visibility hook (else None),
        so a list_changed reaches a session only when its view changed (see `list_changes`)."""
        self.here = here
        self.views = views
        self.poll = poll  # how often a tail reads while its wake-ups cannot reach it
        # an open standalone GET keeps its session alive, as in one process
        self.keep = max(0.01, here.state.idle_ms / 4000)
        self.held: dict[str, Held] = {}

    async def serve(self, session_id: str, exchange: Exchange) -> None:
        last = exchange.headers.get("last-event-id")
        if last is None:
            await self._standalone(session_id, exchange)
            return
        parsed = parse_id(last)
        if parsed is None:
            raise HTTPRefusal(400, f"Bad Request: malformed Last-Event-ID {last!r}")
        state = self.here.state
        # asked before the replay is read: a stream finished now has its final event in that replay
        open_ = parsed[0] == STANDALONE or await state.stream_request(session_id, parsed[0]) is not None
        try:
            stream_id, events = await state.resume(session_id, last)
        except HistoryLost as lost:
            await self._lost(session_id, exchange, lost, parsed[1])
            return
        except UnknownEventId as exc:
            raise HTTPRefusal(400, f"Bad Request: {exc}") from None
        first = b"".join(encode_event(e.data, event_id=e.event_id) for e in events if e.data)
        if not open_ or any(e.final for e in events):
            await _write_all(exchange, first)
            return
        after = events[-1].seq if events else parsed[2]
        held = await self._claim(session_id, exchange.auth) if stream_id == STANDALONE else None
        await self._tail(session_id, stream_id, after, exchange, first, held)

    async def _standalone(self, session_id: str, exchange: Exchange) -> None:
        state = self.here.state
        held = await self._claim(session_id, exchange.auth)
        found = await state.read(session_id, held.after, held.token) if held.after is not None else None
        events = [e for e in found[1] if e.stream_id == STANDALONE and e.data] if found else []
        first = b"".join(encode_event(e.data, event_id=e.event_id) for e in events[-_BACKLOG:])
        after = found[1][-1].seq if found and found[1] else held.after or 0
        retry = self.here.answering.retry_for(exchange.version)
        if retry is not None:
            _, primed = await state.record(session_id, STANDALONE, b"")
            if primed is not None:
                first += encode_event(b"", event_id=primed, retry_ms=retry)
        await self._tail(session_id, STANDALONE, after, exchange, first, held)

    async def _lost(self, session_id: str, exchange: Exchange, lost: HistoryLost, epoch: str) -> None:
        """A resumption from an event a failover lost (see `events`): the stream goes on from the events
        stored after the one the client holds (by their epochs: what the new primary stored), up to its
        response; the standalone stream starts afresh. 410 when the store knows neither the stream's
        request nor its response any more (the request began after what the replica had)."""
        if lost.stream_id == STANDALONE:
            await self._standalone(session_id, exchange)
            return
        state = self.here.state
        found = await state.read(session_id, 0)
        events = found[1] if found is not None else []
        ours = [e for e in events if e.stream_id == lost.stream_id]
        if not any(e.final for e in ours) and await state.stream_request(session_id, lost.stream_id) is None:
            raise HTTPRefusal(410, f"Gone: {lost}; the outcome of the request on that stream is unknown")
        after = max([e.seq for e in events if e.epoch and int(e.epoch) <= int(epoch)], default=0)
        await self._tail(session_id, lost.stream_id, after, exchange, b"", None)

    async def _claim(self, session_id: str, viewer: AccessToken | None) -> Held:
        """This GET (sent with `viewer`) holds the session's standalone stream: the one before it, here
        or on another worker, ends, and nothing it took is delivered again."""
        previous = self.held.get(session_id)
        if previous is not None:
            previous.end()
        held = self.held[session_id] = Held(secrets.token_hex(8), viewer)
        held.after = await self.here.state.claim(session_id, held.token)
        await self.here.state.catch_up(session_id, self.views(viewer))
        await self.here.signals.send(self.here.signals.bus, _takeover(session_id, held))
        return held

    async def _tail(
        self, session_id: str, stream_id: str, after: int, exchange: Exchange, first: bytes, held: Held | None
    ) -> None:
        """Write `first`, then each event of `stream_id` stored after `after`, until its stream's final
        event, the session's end, a takeover or the client's disconnect."""
        signals, channel = self.here.signals, self.here.state.channel(session_id)
        wake = held.wake if held is not None else Wake()
        token = held.token if held is not None else ""
        await signals.watch(channel, wake)
        send, cursor, ended = exchange.send, after, False
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            async with until_disconnect(exchange.receive):
                if first:
                    await send({"type": "http.response.body", "body": first, "more_body": True})
                checked, stale = monotonic(), True
                while not ended and not (held is not None and held.over):
                    if stale:
                        try:
                            found = await self.here.state.read(session_id, cursor, token)
                        except (RedisError, TakenOver):
                            break  # Redis away: the client resumes from what it has, once Redis is back
                        if found is None:
                            break  # the session ended
                        cursor, ended = await self._write(exchange, stream_id, found[1], cursor)
                    if ended:
                        break
                    stale = await wake.wait(self._patience(channel, held))
                    stale = stale or not signals.confirmed(channel)
                    if monotonic() - checked > (self.keep if held else self.here.dead_after):
                        checked = monotonic()
                        if not await self._check(session_id, stream_id, held):
                            break
        finally:
            await signals.unwatch(channel, wake)
            if held is not None and self.held.get(session_id) is held:
                del self.held[session_id]
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _write(
        self, exchange: Exchange, stream_id: str, events: list[Event], cursor: int
    ) -> tuple[int, bool]:
        """The events of `stream_id` sent; (the last event looked at, whether it was the final one)."""
        for event in events:
            cursor = event.seq
            if event.stream_id == stream_id and event.data:
                body = encode_event(event.data, event_id=event.event_id)
                await exchange.send({"type": "http.response.body", "body": body, "more_body": True})
            if event.stream_id == stream_id and event.final:
                return cursor, True
        return cursor, False

    def _patience(self, channel: str, held: Held | None) -> float | None:
        """How long a tail waits for a wake-up: for ever while they reach it (a resumption checks on its
        request's worker, a standalone GET keeps its session), else it polls."""
        if not self.here.signals.confirmed(channel):
            return self.poll
        return self.keep if held is not None else self.here.dead_after

    async def _check(self, session_id: str, stream_id: str, held: Held | None) -> bool:
        """False when the session is gone."""
        try:
            if held is not None:
                return await self.here.state.touch(session_id)
            await self._finish_if_lost(session_id, stream_id)
        except RedisError:
            pass  # the next read ends the tail if Redis is still away
        return True

    async def _finish_if_lost(self, session_id: str, stream_id: str) -> None:
        """A stream whose request's worker died gets an error response, stored once, by whichever worker
        a client resumes it on."""
        owner = stream_id.rsplit("_", 1)[-1]
        if await self.here.alive(owner):
            return
        rid = await self.here.state.stream_request(session_id, stream_id)
        if rid is not None:
            await self.here.state.store(session_id, stream_id, lost_answer(rid), final=True)

    def taken_over(self, session_id: str, token: str) -> None:
        """Another GET claimed the session's stream: the one held here reads at once, and Redis, which
        knows the newest claim, ends it (a late message about an older claim must not end a newer GET)."""
        held = self.held.get(session_id)
        if held is not None and held.token != token:
            held.wake.set()

    def end(self, session_id: str) -> None:
        held = self.held.pop(session_id, None)
        if held is not None:
            held.end()

    def end_all(self) -> None:
        for session_id in list(self.held):
            self.end(session_id)

    async def on_change(self, message: JSON) -> None:
        """A change published on the bus: stored for the standalone streams held here (a list_changed
        for the others waits in Redis for their next GET)."""
        state, kind = self.here.state, message.get("k")
        views: dict[int, Views | None] = {}  # by token: the GETs of one caller are decided once
        for session_id, held in list(self.held.items()):
            if kind == "changed":
                if id(held.viewer) not in views:
                    views[id(held.viewer)] = self.views(held.viewer)
                await state.catch_up(session_id, views[id(held.viewer)])
                continue
            note = await self._note(session_id, message) if kind == "log" else None
            if note is not None:
                await state.store(session_id, STANDALONE, orjson.dumps(note))

    async def _note(self, session_id: str, message: JSON) -> JSON | None:
        threshold = await self.here.state.level(session_id)
        level, data, logger = str(message.get("level")), message.get("data"), message.get("logger")
        params = log_params(level, data, logger if isinstance(logger, str) else None, threshold)
        return {"jsonrpc": "2.0", "method": "notifications/message", "params": params} if params else None


async def _write_all(exchange: Exchange, body: bytes) -> None:
    """A whole SSE response: a resumed stream that had already ended."""
    await exchange.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    await exchange.send({"type": "http.response.body", "body": body, "more_body": False})


def _takeover(session_id: str, held: Held) -> JSON:
    return {"k": "takeover", "sid": session_id, "token": held.token}


_LOST = {
    "worker_lost": "Internal error: the worker serving this request stopped",
    "store_failed": "Internal error: the session store failed while this request was served",
    "worker_shutdown": "Internal error: the worker serving this request shut down before it finished",
}


def lost_answer(rid: RequestId, reason: str = "worker_lost") -> bytes:
    """The response a stream gets when its request can no longer be answered (the spec has no code for
    it: JSON-RPC's internal error, with the reason in data)."""
    return encode(error_response(rid, INTERNAL_ERROR, _LOST[reason], {"reason": reason}))
