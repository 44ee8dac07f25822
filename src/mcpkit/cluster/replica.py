"""A session as one worker serves it for a POST: restored from the shared record, its events stored in
Redis before they are written, its own requests to the client numbered so any worker can route the
answers back here. Between the session's requests on this worker it waits in `WarmReplicas` (warm.py),
or is closed; what is per request (`planned` and the flags after it) starts over with `reuse`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
from redis.exceptions import RedisError

from ..protocol.errors import INTERNAL_ERROR
from ..protocol.jsonrpc import JSON, RequestId
from ..runtime.stream import Outgoing, Restored, StreamAttribute
from ..transports.http_server.sessions import STANDALONE, Item, Route, SessionStream
from .tails import lost_answer
from .this_worker import ThisWorker

__all__ = ["Replica"]


class Replica(SessionStream):
    __slots__ = (
        "agreement",
        "answered",
        "closed_routes",
        "declared",
        "here",
        "planned",
        "preprimed",
        "primed",
        "request_ids",
        "restored",
        "reusable",
        "sets_level",
        "store_failed",
    )

    def __init__(
        self,
        session_id: str,
        here: ThisWorker[Replica],
        restored: Restored | None,
        planned: str,
        preprimed: str | None = None,
    ) -> None:
        super().__init__(session_id)
        self.here = here
        self.restored = restored
        self.request_ids = here.request_ids
        self.reusable = True  # false once a request on it failed or was cancelled: closed after it
        self.agreement: Restored | None = None  # an initialize's, written with its response
        self._start(planned, preprimed)

    def reuse(self, planned: str, preprimed: str | None = None) -> None:
        """Serve the session's next request, whose stream is `planned` (and whose priming event, if
        `begin` stored it, has the id `preprimed`)."""
        self._start(planned, preprimed)

    def _start(self, planned: str, preprimed: str | None) -> None:
        self.planned = planned  # the stream id its request's route gets, known to the cluster before
        self.preprimed = preprimed  # the priming event stored with `begin`, not stored again
        self.sets_level: tuple[RequestId, str] | None = None  # a logging/setLevel, shared once it succeeds
        self.declared: tuple[JSON, JSON] = ({}, {})  # an initialize's client capabilities and info
        self.closed_routes = anyio.Event()
        self.answered = False  # its request's stream has its last event in the log
        self.store_failed = False  # Redis failed it: its response is gone with the connection it ended
        self.primed = False  # an event of its request's stream is stored: the client may resume it

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        facts = {**super().extra_attributes, StreamAttribute.request_ids: lambda: self.request_ids}
        if self.restored is not None:
            facts[StreamAttribute.restored] = lambda: self.restored
        return facts

    def new_stream_id(self) -> str:
        return self.planned  # one request at a time, whose stream the cluster named already

    def close_route(self, rid: RequestId, route: Route) -> None:
        super().close_route(rid, route)
        if not self.routes:
            self.closed_routes.set()

    async def record_priming(self, stream_id: str | None) -> str | None:
        """The request's priming event: stored already by `begin` when it was asked to."""
        if stream_id != self.planned or self.preprimed is None or self.closed:
            return await super().record_priming(stream_id)
        primed, self.preprimed = self.preprimed, None
        self.primed = True
        return primed

    async def record(self, stream_id: str | None, data: bytes, final: bool = False) -> str | None:
        if stream_id is None or self.closed or self.session_id is None:
            return None
        agreed, self.agreement = self.agreement, None
        try:
            seq, event_id = await self.here.state.record(
                self.session_id, stream_id, data, final=final, agreed=agreed
            )
        except RedisError as exc:
            # not stored, so not sent: the connection ends, and the client's resumption finds the rest
            self._lost(exc)
            raise
        if stream_id == self.planned and seq > 0:
            self.primed = True
        if final and stream_id == self.planned and seq != 0:
            self.answered = True
        return event_id

    def close(self) -> None:
        super().close()
        self.closed_routes.set()

    async def give_up(self, reason: str) -> None:
        """Answer each request still unanswered here with `lost_answer(reason)` (stored first, so its
        resumption anywhere ends with it too) and stop the handler."""
        self.reusable = False
        for rid, route in list(self.routes.items()):
            data = lost_answer(rid, reason)
            try:
                event_id = await self.record(route.stream_id, data, final=True)
            except RedisError:  # not stored: settled once Redis is back
                event_id = None
            await route.offer(Item(event_id, data, True, INTERNAL_ERROR))
            self.close_route(rid, route)
        self.close()

    def _lost(self, exc: RedisError) -> None:
        self.store_failed = True
        self.reusable = False
        self.failure = exc  # a POST not answered yet is refused with it (503), not left empty
        self.close()
        self.here.health.lost(exc)

    async def send(self, out: Outgoing) -> None:
        """What a handler sends; with Redis lost, dropped as on a closed stream (the request is settled
        with a stored error once Redis is back), never an exception in the handler's task."""
        try:
            await self._send(out)
        except RedisError as exc:
            self._lost(exc)
            raise anyio.ClosedResourceError from None

    async def _send(self, out: Outgoing) -> None:
        decoded = out.decoded
        if "method" in decoded and "id" in decoded:  # our request: its answer may land on any worker
            assert self.session_id is not None
            rid = decoded["id"]
            self.here.awaiting[(self.session_id, rid)] = self
            await self.here.state.ask(self.session_id, rid, self.here.name)
        elif self.sets_level is not None and out.answers == self.sets_level[0] and "error" not in decoded:
            assert self.session_id is not None
            await self.here.state.set_level(self.session_id, self.sets_level[1])
        await super().send(out)

    async def agreed(self, out: Outgoing) -> None:
        """Written with the initialize response (`record`), or on its own when that is not stored."""
        if self.session_id is None or self.version is None:
            return
        caps, info = self.declared
        agreement = Restored(self.version, caps, info)
        route = self.routes.get(out.answers) if out.answers is not None else None
        if route is not None and route.stream_id is not None:
            self.agreement = agreement
        else:  # a JSON answer
            await self.here.state.agreed(self.session_id, agreement)

    async def send_standalone(self, data: bytes) -> None:
        """Stored for the session's GET stream, wherever it is open (or the next one)."""
        if self.session_id is not None and not self.closed:
            await self.here.state.store(self.session_id, STANDALONE, data)
