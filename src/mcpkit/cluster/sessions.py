"""Streamable HTTP sessions served by any worker of a cluster (the app's cluster `SessionHost`).

Every POST naming a session is served on the worker it lands on, by a `Replica` restored from the
shared record. Its events are stored in Redis before they are written, so a client whose stream
broke resumes it with Last-Event-ID on any worker: that worker replays the log and then tails it
until the stream's response. The standalone GET stream is such a tail too, so a message for it may be
produced on any worker. The client's answer to our request goes to the worker its id names; a
notifications/cancelled goes to the worker serving that request.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterator
from functools import partial

import anyio
import orjson
from anyio.abc import TaskGroup
from redis.exceptions import RedisError

from ..protocol.errors import INTERNAL_ERROR
from ..protocol.http_rules import SESSION_NOT_FOUND, HTTPRefusal, asks_for_notifications, request_version
from ..protocol.jsonrpc import JSON, Notification, Request, RequestId
from ..protocol.utilities import read_cancel
from ..protocol.versions import SUPPORTED_VERSIONS
from ..transports.http_server.asgi import JSON_HEADERS, respond
from ..transports.http_server.delivery import Answering, deliver
from ..transports.http_server.exchange import Exchange
from ..transports.http_server.sessions import SessionStream
from .budget import EventBudget
from .fanout import Fanout
from .reclaim import Reclaimer
from .replica import Replica
from .signals import Signals
from .state import Began, DuplicateRequest, SessionBusy, SharedState
from .store_health import SessionFull, StoreHealth
from .tails import Tails, lost_answer
from .this_worker import ThisWorker
from .warm import WarmReplicas

__all__ = ["ClusterSessions"]

log = logging.getLogger("mcpkit.cluster")

_NO_SESSION = "Bad Request: this message carries no Mcp-Session-Id header: send initialize first"


class ClusterSessions:
    """One worker's share of the cluster's sessions."""

    def __init__(
        self,
        state: SharedState,
        worker: str,
        serve: Callable[[SessionStream], Awaitable[None]],
        answering: Answering,
        *,
        strict_version: bool,
        heartbeat: float,
        dead_after: float,
        fanout: Fanout,
        warm: WarmReplicas | None = None,
    ) -> None:
        self.state, self.worker = state, worker
        self._serve = serve
        self.answering = answering
        self.strict_version = strict_version
        self.heartbeat, self.dead_after = heartbeat, dead_after
        # ids of our requests to clients name the worker to route the answer to, and are unguessable:
        # an answer is only taken on the session that was asked (see `_answer`), this is the second line
        self.request_ids: Iterator[RequestId] = (
            f"{worker}.{secrets.token_urlsafe(16)}" for _ in itertools.count()
        )
        self._stream_numbers = itertools.count(1)
        self.signals = Signals(
            state.redis,
            inbox=self.inbox_of(worker),
            bus=state.bus,
            on_inbox=self._on_inbox,
            on_bus=self._on_bus,
        )
        self.health = StoreHealth()
        self.here = ThisWorker[Replica](
            state, worker, self.signals, self.health, self.request_ids, answering, dead_after
        )
        self.awaiting = self.here.awaiting  # our requests to clients: (session, id) -> the replica that asked
        self.serving = self.here.serving  # (session, request id as JSON) -> the replica serving it
        self.fanout = fanout  # what the bus brings for the Server's peers and tasks
        self.tails = Tails(self.here, views=fanout.views)
        self.budget = EventBudget(state, worker)
        self._unsettled: list[tuple[str, RequestId, str, str | None]] = []
        self._reclaim = Reclaimer(state, dead_after)
        self.warm = warm if warm is not None else WarmReplicas(0, 1.0)
        self._group: TaskGroup | None = None  # where replicas' sessions run, between requests too
        self._started = anyio.Event()

    def inbox_of(self, worker: str) -> str:
        return f"{self.state.prefix}w:{worker}"

    def alive_key(self, worker: str) -> str:
        return self.state.alive_key(worker)

    def next_stream(self) -> str:
        return f"p{next(self._stream_numbers)}_{self.worker}"

    # ---- lifetime ----------------------------------------------------------------------------

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            self._group = tg
            self._started.set()
            tg.start_soon(self._sweep)
            tg.start_soon(self.signals.run)
            tg.start_soon(self._settle_later)
            tg.start_soon(self.fanout.run)
            tg.start_soon(self.budget.run)
            tg.start_soon(self.state.upkeep)
            await self._beat()

    async def _beat(self) -> None:
        key, ttl = self.alive_key(self.worker), int(self.dead_after * 1000)
        while True:
            try:
                await self.state.redis.set(key, b"1", px=ttl)
            except Exception as exc:  # Redis away: the signals reader logs it
                log.debug("heartbeat failed: %s", exc)
            await anyio.sleep(self.heartbeat)

    async def _sweep(self) -> None:
        while True:
            await anyio.sleep(min(self.warm.max_idle / 2, 5.0))
            self.warm.sweep()

    async def _serving(self, replica: Replica) -> None:
        """`replica`'s session runs from now on, between its requests too."""
        if self._group is None:
            await self._started.wait()
        assert self._group is not None
        self._group.start_soon(self._run, replica)

    async def alive(self, worker: str) -> bool:
        return await self.here.alive(worker)

    async def end_all(self) -> None:
        """Past a drain's deadline: each request served here is answered -32603 (`worker_shutdown`),
        on its POST and in the log for a resumption on another worker."""
        for replica in list(self.serving.values()):
            await replica.give_up("worker_shutdown")

    async def aclose(self) -> None:
        self.warm.close_all()
        for replica in list(self.serving.values()):
            replica.close()
        self.tails.end_all()

    # ---- POST --------------------------------------------------------------------------------

    async def new(self, exchange: Exchange) -> None:
        session_id = secrets.token_urlsafe(32)
        message = exchange.message
        assert isinstance(message, Request)
        stream_id = self.next_stream()
        with self.health.reachable():
            views = self.fanout.views(exchange.auth)
            opened = await self.state.open(
                session_id,
                exchange.principal,
                views,
                worker=self.worker,
                request_id=message.id,
                stream_id=stream_id,
                prime=self._primes(exchange, message),
            )
        if opened is None:
            raise HTTPRefusal(503, "Service Unavailable: too many sessions", INTERNAL_ERROR, retry_after="5")
        replica = Replica(session_id, self.here, None, stream_id, opened.primed)
        await self._serving(replica)
        params = message.params
        caps, info = params.get("capabilities"), params.get("clientInfo")
        replica.declared = (caps if isinstance(caps, dict) else {}, info if isinstance(info, dict) else {})
        exchange.response_headers.append((b"mcp-session-id", session_id.encode()))
        try:
            await self._serve_request(replica, exchange, message)
        except HTTPRefusal:  # no client holds the session's id: nothing of it is kept
            with contextlib.suppress(RedisError):
                await self.state.end(session_id)
            raise

    async def post(self, exchange: Exchange) -> None:
        message = exchange.message
        session_id = exchange.headers.get("mcp-session-id")
        if session_id is None:
            raise HTTPRefusal(400, _NO_SESSION)
        if isinstance(message, Request):
            await self._request(session_id, exchange, message)
            return
        await self._restore(session_id, exchange)
        if isinstance(message, Notification):
            await self._notification(session_id, exchange, message)
        else:
            await self._answer(session_id, exchange)
        await respond(exchange.send, 202, b"", [])
        self.health.ok()

    async def _restore(
        self,
        session_id: str,
        exchange: Exchange,
        request: Request | None = None,
        stream_id: str = "",
        prime: bool = False,
    ) -> Began:
        """The session's agreement (404 when there is none for this principal), its idle time restarted;
        with `prime`, its request stream's priming event is stored too."""
        begin = partial(
            self.state.begin_request,
            session_id,
            exchange.principal,
            worker=self.worker,
            request_id=request.id if request is not None else None,
            stream_id=stream_id or None,
            prime=prime,
        )
        try:
            with self.health.reachable():
                try:
                    began = await begin()
                except SessionBusy:
                    if not await self._reclaim(session_id):  # dead workers' requests hold places
                        raise
                    began = await begin()
        except DuplicateRequest:
            rid = request.id if request is not None else None
            raise HTTPRefusal(400, f"Bad Request: request id {rid!r} is already in flight") from None
        except SessionBusy:
            assert request is not None
            raise SessionFull(request.id, self.state.max_in_flight) from None
        if began is None:
            raise HTTPRefusal(404, "Session not found", SESSION_NOT_FOUND)
        header = exchange.headers.get("mcp-protocol-version")
        exchange.version = request_version(header, began.restored.version, self.strict_version)
        return began

    async def _request(self, session_id: str, exchange: Exchange, request: Request) -> None:
        stream_id = self.next_stream()
        try:
            began = await self._restore(
                session_id, exchange, request, stream_id, self._primes(exchange, request)
            )
        except SessionFull as busy:  # answered as one process answers it: the request's error, as JSON
            await respond(exchange.send, 200, busy.response(), JSON_HEADERS)
            return
        restored, primed = began
        replica = self.warm.take(session_id, restored)
        if replica is not None:
            replica.reuse(stream_id, primed)
        else:
            replica = Replica(session_id, self.here, restored, stream_id, primed)
            await self._serving(replica)
        if request.method == "logging/setLevel" and isinstance(request.params.get("level"), str):
            replica.sets_level = (request.id, request.params["level"])
        await self._serve_request(replica, exchange, request)

    def _primes(self, exchange: Exchange, request: Request) -> bool:
        """Whether the request's SSE stream opens with a priming event, as far as its header tells
        (without one, the session's version decides later, and the event is stored then)."""
        version = exchange.headers.get("mcp-protocol-version")
        sse = not self.answering.json_response or asks_for_notifications(request.method, request.params)
        known = version in SUPPORTED_VERSIONS
        return sse and known and self.answering.retry_for(version or "") is not None

    async def _serve_request(self, replica: Replica, exchange: Exchange, request: Request) -> None:
        """Serve one request on `replica` until its response is stored, even past a dropped POST (the
        rest is in the log for the client's resumption)."""
        assert replica.session_id is not None
        key = (replica.session_id, orjson.dumps(request.id).decode())
        self.serving[key] = replica
        stored = not self.answering.json_response or asks_for_notifications(request.method, request.params)
        try:
            # a Redis failure before the response started (its priming event not stored) is a 503
            with self.health.reachable():
                try:
                    await deliver(replica, exchange, self.answering)
                    if replica.routes:
                        await replica.closed_routes.wait()
                except BaseException:
                    replica.close()
                    raise
            if not replica.store_failed:
                self.health.ok()
        finally:
            self.serving.pop(key, None)
            asked = [held for held, waiting in self.awaiting.items() if waiting is replica]
            for held in asked:
                del self.awaiting[held]
            with anyio.CancelScope(shield=True):
                await self._settle(replica, request.id, stored)
                if asked:
                    await self._forget_asked(replica.session_id, [rid for _, rid in asked])
            self.warm.keep(replica)  # or closed

    async def _forget_asked(self, session_id: str, rids: list[RequestId]) -> None:
        """Requests of ours the client never answered: a late answer is then refused, not routed."""
        with contextlib.suppress(RedisError):  # else they expire with the session's record
            await self.state.forget_asked(session_id, rids)

    async def _settle(self, replica: Replica, rid: RequestId, stored: bool) -> None:
        """Take a served request off the session's in flight; a stored stream left without its response
        (Redis failed mid-way, or this worker is shutting down) gets an error as its last event, now or,
        while Redis is away, as soon as it is back."""
        assert replica.session_id is not None
        if stored and replica.answered:
            return
        reason = "store_failed" if replica.store_failed else "worker_lost"
        # a stream none of whose events was stored was refused (503) or never opened: nothing to resume
        resumable = stored and (replica.primed or not replica.store_failed)
        settle = (replica.session_id, rid, replica.planned, reason if resumable else None)
        try:
            await self._settle_one(*settle)
        except RedisError:
            self._unsettled.append(settle)

    async def _settle_one(self, session_id: str, rid: RequestId, stream_id: str, reason: str | None) -> None:
        if reason is None:
            await self.state.finish(session_id, rid, stream_id)
        else:
            await self.state.store(session_id, stream_id, lost_answer(rid, reason), final=True)

    async def _settle_later(self) -> None:
        while True:
            await anyio.sleep(1.0)
            while self._unsettled:
                try:
                    await self._settle_one(*self._unsettled[0])
                except RedisError:
                    break
                self._unsettled.pop(0)

    async def _run(self, replica: Replica) -> None:
        try:
            await self._serve(replica)
        except Exception:
            log.exception("MCP session %s failed", replica.session_id)
        finally:
            replica.close()

    async def _notification(self, session_id: str, exchange: Exchange, note: Notification) -> None:
        if note.method == "notifications/cancelled":
            named = read_cancel(note.params)
            if named is not None:
                owner = await self.state.request_owner(session_id, named[0])
                if owner is not None:
                    await self._route(owner, {"k": "cancel", "sid": session_id, "id": named[0]})
        elif note.method != "notifications/initialized":  # restoring a session needs no initialized
            await self._serve_notification(session_id, exchange, note)

    async def _serve_notification(self, session_id: str, exchange: Exchange, note: Notification) -> None:
        restored = (await self._restore(session_id, exchange)).restored
        replica = Replica(session_id, self.here, restored, "")
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._run, replica)
            await replica.push(exchange.inbound, exchange.origin(session_id))
            await anyio.sleep(0)  # let the handler start before the replica closes
            replica.close()

    async def _answer(self, session_id: str, exchange: Exchange) -> None:
        """The client's response to a request of ours: to the worker whose replica waits for it. Only
        a request asked on this very session can be answered, once; any other id is refused (400), so
        no client completes another session's elicitation, sampling or roots request."""
        decoded = exchange.decoded or {}
        rid = decoded.get("id")
        with self.health.reachable():
            owner = await self.state.take_asked(session_id, rid) if isinstance(rid, str | int) else None
        if owner is None:
            raise HTTPRefusal(
                400, f"Bad Request: no request of this session awaits an answer with id {rid!r}"
            )
        await self._route(owner, {"k": "answer", "sid": session_id, "body": decoded})

    async def _route(self, worker: str, message: JSON) -> None:
        if worker == self.worker:
            await self._on_inbox(message)
        else:
            await self.signals.send(self.inbox_of(worker), message)

    async def _on_inbox(self, message: JSON) -> None:
        kind, session_id = message.get("k"), message.get("sid")
        body, rid = message.get("body"), message.get("id")
        if kind == "answer" and isinstance(body, dict) and isinstance(session_id, str):
            rid = body.get("id")
            replica = self.awaiting.pop((session_id, rid), None) if isinstance(rid, str | int) else None
            if replica is not None:
                await replica.push(body)
        elif kind == "cancel" and isinstance(rid, str | int):
            await self._cancel(str(message.get("sid")), rid)

    async def _cancel(self, session_id: str, rid: RequestId) -> None:
        """utilities "Cancellation": the handler stops, no response follows, its stream ends."""
        replica = self.serving.get((session_id, orjson.dumps(rid).decode()))
        if replica is None:
            return
        route = replica.routes.get(rid)
        if route is not None:
            replica.close_route(rid, route)
            replica.reusable = False  # its handler may still be stopping: the next request gets a new one
            if route.stream_id is not None:
                replica.answered = True  # no response: the stream just ends
                await self.state.store(session_id, route.stream_id, b"", final=True)
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
        await replica.push(note)

    # ---- GET, DELETE, the bus -----------------------------------------------------------------

    async def get(self, exchange: Exchange) -> None:
        session_id = exchange.headers.get("mcp-session-id")
        if session_id is None:
            raise HTTPRefusal(400, _NO_SESSION)
        await self._restore(session_id, exchange)
        with self.health.reachable():  # what fails before the stream starts; a tail ends quietly after
            await self.tails.serve(session_id, exchange)

    async def delete(self, exchange: Exchange) -> None:
        session_id = exchange.headers.get("mcp-session-id")
        if session_id is None:
            raise HTTPRefusal(400, _NO_SESSION)
        await self._restore(session_id, exchange)
        await self.state.end(session_id)
        await self.signals.send(self.signals.bus, {"k": "end", "sid": session_id})
        await respond(exchange.send, 204, b"", [])

    async def _on_bus(self, message: JSON) -> None:
        kind, session_id = message.get("k"), message.get("sid")
        if kind == "end" and isinstance(session_id, str):
            self.warm.forget(session_id)
            for (sid, _), replica in list(self.serving.items()):
                if sid == session_id:
                    replica.close()
            self.tails.end(session_id)
        elif kind == "takeover" and isinstance(session_id, str):
            self.tails.taken_over(session_id, str(message.get("token")))
        elif kind == "budget":
            self.budget.heard(message)
        else:
            self.fanout.deliver(message)
            await self.tails.on_change(message)
