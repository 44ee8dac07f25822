"""GET streams on a cluster worker: a resumption (Last-Event-ID) replays the session's shared log and
then tails it until its stream's response; the standalone stream tails the log's "get" stream for as
long as the client holds it. A newer standalone GET anywhere takes the stream over (the older one
ends), so a message never goes out on two streams and a half-open connection never blocks a new one.
"""

from __future__ import annotations

import secrets
from contextlib import suppress
from dataclasses import dataclass, field
from time import monotonic
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import RedisError

from ..protocol.errors import INTERNAL_ERROR
from ..protocol.http_rules import HTTPRefusal, format_event_id, parse_event_id
from ..protocol.jsonrpc import RequestId, encode, error_response
from ..protocol.sse import encode_event
from ..protocol.utilities import log_params
from ..transports.http_server.asgi import SSE_HEADERS, until_disconnect
from ..transports.http_server.event_store import UnknownEventId
from ..transports.http_server.exchange import Exchange
from ..transports.http_server.sessions import STANDALONE
from .signals import Wake

if TYPE_CHECKING:
    from .http import ClusterSessions

__all__ = ["Tails"]

JSON = dict[str, Any]
_BACKLOG = 64  # standalone events kept for a new GET that names no Last-Event-ID, as in one process


@dataclass(eq=False)
class Held:
    """The standalone GET this worker holds for a session."""

    token: str
    wake: Wake = field(default_factory=Wake)
    over: bool = False

    def end(self) -> None:
        self.over = True
        self.wake.set()


class Tails:
    def __init__(self, cluster: ClusterSessions, poll: float = 1.0) -> None:
        self.cluster = cluster
        self.poll = poll  # wake-ups are at most once; a tail also reads this often
        self.held: dict[str, Held] = {}

    async def serve(self, session_id: str, exchange: Exchange) -> None:
        last = exchange.headers.get("last-event-id")
        if last is None:
            await self._standalone(session_id, exchange)
            return
        parsed = parse_event_id(last)
        if parsed is None:
            raise HTTPRefusal(400, f"Bad Request: malformed Last-Event-ID {last!r}")
        try:
            replay = await self.cluster.state.replay_after(session_id, last)
        except UnknownEventId as exc:
            raise HTTPRefusal(400, f"Bad Request: {exc}") from None
        first = b"".join(encode_event(data, event_id=eid) for eid, data in replay.events if data)
        after = parse_event_id(replay.events[-1][0])[1] if replay.events else parsed[1]  # type: ignore[index]
        held = self._claim(session_id) if replay.stream_id == STANDALONE else None
        if held is not None:
            await self.cluster.signals.send(self.cluster.signals.bus, _takeover(session_id, held))
        await self._tail(session_id, replay.stream_id, after, exchange, first, held)

    async def _standalone(self, session_id: str, exchange: Exchange) -> None:
        state = self.cluster.state
        held = self._claim(session_id)
        await self.cluster.signals.send(self.cluster.signals.bus, _takeover(session_id, held))
        after = await state.standalone_end(session_id)
        found = await state.read(session_id, after)
        events = [e for e in found[1] if e.stream_id == STANDALONE and e.data] if found else []
        first = b"".join(encode_event(e.data, event_id=e.event_id) for e in events[-_BACKLOG:])
        after = found[1][-1].seq if found and found[1] else after
        retry = self.cluster.answering.retry_for(exchange.version)
        if retry is not None:
            seq = await state.store(session_id, STANDALONE, b"")
            if seq > 0:
                first += encode_event(b"", event_id=format_event_id(STANDALONE, seq), retry_ms=retry)
        await self._tail(session_id, STANDALONE, after, exchange, first, held)

    def _claim(self, session_id: str) -> Held:
        previous = self.held.get(session_id)
        if previous is not None:
            previous.end()
        held = self.held[session_id] = Held(secrets.token_hex(8))
        return held

    async def _tail(
        self, session_id: str, stream_id: str, after: int, exchange: Exchange, first: bytes, held: Held | None
    ) -> None:
        """Write `first`, then each event of `stream_id` stored after `after`, until its stream's final
        event, the session's end, a takeover or the client's disconnect."""
        signals, channel = self.cluster.signals, self.cluster.state.channel(session_id)
        wake = held.wake if held is not None else Wake()
        await signals.watch(channel, wake)
        send, cursor, ended = exchange.send, after, False
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            async with until_disconnect(exchange.receive):
                if first:
                    await send({"type": "http.response.body", "body": first, "more_body": True})
                checked = monotonic()
                while not ended and not (held is not None and held.over):
                    try:
                        found = await self.cluster.state.read(session_id, cursor)
                    except RedisError:
                        break  # the client resumes from what it has, once Redis is back
                    if found is None:
                        break  # the session ended
                    for event in found[1]:
                        cursor = event.seq
                        if event.stream_id == stream_id and event.data:
                            body = encode_event(event.data, event_id=event.event_id)
                            await send({"type": "http.response.body", "body": body, "more_body": True})
                        if event.stream_id == stream_id and event.final:
                            ended = True
                            break
                    if not ended:
                        await wake.wait(self.poll)
                    if held is None and not ended and monotonic() - checked > self.cluster.dead_after:
                        checked = monotonic()
                        await self._finish_if_lost(session_id, stream_id)
        finally:
            await signals.unwatch(channel, wake)
            if held is not None:
                if self.held.get(session_id) is held:
                    del self.held[session_id]
                with suppress(RedisError):
                    await self.cluster.state.set_standalone_end(session_id, cursor)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _finish_if_lost(self, session_id: str, stream_id: str) -> None:
        """A stream whose request's worker died gets an error response, stored once, by whichever worker
        a client resumes it on."""
        owner = stream_id.rsplit("_", 1)[-1]
        if await self.cluster.alive(owner):
            return
        rid = await self.cluster.state.stream_request(session_id, stream_id)
        if rid is not None:
            await self.cluster.state.store(session_id, stream_id, lost_answer(rid), final=True)

    def taken_over(self, session_id: str, token: str) -> None:
        held = self.held.get(session_id)
        if held is not None and held.token != token:
            held.end()

    def end(self, session_id: str) -> None:
        held = self.held.pop(session_id, None)
        if held is not None:
            held.end()

    def end_all(self) -> None:
        for session_id in list(self.held):
            self.end(session_id)

    async def on_change(self, message: JSON) -> None:
        """A change published on the bus: stored for the standalone streams held here."""
        state = self.cluster.state
        for session_id in list(self.held):
            note = await self._note(session_id, message)
            if note is not None:
                await state.store(session_id, STANDALONE, orjson.dumps(note))

    async def _note(self, session_id: str, message: JSON) -> JSON | None:
        kind = message.get("k")
        if kind == "changed":
            return {"jsonrpc": "2.0", "method": message.get("m")}
        if kind != "log":
            return None
        threshold = await self.cluster.state.level(session_id)
        level, data, logger = str(message.get("level")), message.get("data"), message.get("logger")
        params = log_params(level, data, logger if isinstance(logger, str) else None, threshold)
        return {"jsonrpc": "2.0", "method": "notifications/message", "params": params} if params else None


def _takeover(session_id: str, held: Held) -> JSON:
    return {"k": "takeover", "sid": session_id, "token": held.token}


_LOST = {
    "worker_lost": "Internal error: the worker serving this request stopped",
    "store_failed": "Internal error: the session store failed while this request was served",
}


def lost_answer(rid: RequestId, reason: str = "worker_lost") -> bytes:
    """The response a stream gets when its request can no longer be answered (the spec has no code for
    it: JSON-RPC's internal error, with the reason in data)."""
    return encode(error_response(rid, INTERNAL_ERROR, _LOST[reason], {"reason": reason}))
