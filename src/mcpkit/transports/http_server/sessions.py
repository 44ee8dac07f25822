"""One Streamable HTTP session as the MessageStream its `serve` sees, and the SSE streams it sends on.

POST bodies come in through `push`, which hands each to the Session in the POST's own task (`deliver`).
Each message `serve` sends is routed: to the stream of the request it is `related` to while that request
is unanswered, else to the session's standalone (GET) stream. A routed message is stored in the
EventStore first and then handed to the HTTP response currently attached to its stream, if any; a stream
whose connection dropped keeps storing until its response, so nothing it would have carried is lost to a
client that resumes with Last-Event-ID (transports "Resumability").
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from time import monotonic
from typing import Any, NamedTuple

import anyio

from ...protocol.http_rules import (
    SESSION_NOT_FOUND,
    HTTPRefusal,
    agreed_version,
    format_event_id,
)
from ...protocol.jsonrpc import JSON, RequestId
from ...runtime.mailbox import Mailbox
from ...runtime.origin import Origin
from ...runtime.stream import Attributes, Deliver, Inbound, Outgoing, StreamAttribute
from .event_store import EventStore

__all__ = ["STANDALONE", "Item", "Route", "SessionStream"]

STANDALONE = "get"
_BUFFER = 256
_BACKLOG = 64  # standalone events kept for the next GET when none is open; older ones wait only in the store


class Item(NamedTuple):
    """One message on its way to an HTTP response: its SSE event id (None when not stored) and whether it
    is the response that ends its stream (with the code of its error, if it is one)."""

    event_id: str | None
    data: bytes
    final: bool = False
    error_code: int | None = None  # a final error response's code (its HTTP status, for a stateless request)


class Route:
    """One SSE stream (a POST's, or the standalone one) and the HTTP response now writing it, if any."""

    __slots__ = ("_conn", "done", "prime_retry_ms", "stream_id")

    def __init__(self, stream_id: str | None, prime_retry_ms: int | None = None) -> None:
        self.stream_id = stream_id  # None: not stored (a JSON-mode answer, a POST without a session)
        self.prime_retry_ms = prime_retry_ms  # from 2025-11-25 a stream opens with an id-only event
        self.done = False
        self._conn: Mailbox[Item] | None = None

    @property
    def attached(self) -> bool:
        return self._conn is not None

    def attach(self) -> Mailbox[Item]:
        """A new response takes this stream over; one it replaces ends."""
        if self._conn is not None:
            self._conn.close()
        self._conn = Mailbox[Item](_BUFFER)
        if self.done:
            self._conn.close()
        return self._conn

    def detach(self, receiver: Mailbox[Item]) -> None:
        receiver.discard()
        if self._conn is receiver:
            self._conn = None

    async def offer(self, item: Item) -> bool:
        """Hand `item` to the attached response; False if none took it."""
        conn = self._conn
        if conn is None:
            return False
        if await conn.put(item):
            return True
        if self._conn is conn:
            self._conn = None
        return False

    def finish(self) -> None:
        """No more messages: the response went out, the request was cancelled, or the session ended."""
        self.done = True
        if self._conn is not None:
            self._conn.close()


class SessionStream(Attributes):
    """The MessageStream of one session (or of one POST served without a session, when `session_id` is
    None: a 2026-07-28 request, or any message to a server keeping no sessions)."""

    __slots__ = (
        "_deliver",
        "_ended",
        "_local_ids",
        "_started",
        "_stream_ids",
        "active",
        "backlog",
        "client",
        "closed",
        "failure",
        "init_id",
        "last_seen",
        "pre_agreed",
        "principal",
        "routes",
        "session_id",
        "standalone",
        "store",
        "streams",
        "version",
    )

    def __init__(self, session_id: str | None, store: EventStore | None = None) -> None:
        self.session_id = session_id
        self.store = store if session_id is not None else None
        self._deliver: Deliver | None = None  # the Session's entry, once it runs
        self._started: anyio.Event | None = None  # what a POST before that waits on
        self._ended: anyio.Event | None = None  # what `deliver_to` waits on until the session closes
        self.routes: dict[RequestId, Route] = {}  # unanswered requests with a stream
        self.streams: dict[str, Route] = {}  # the same routes by stream id, for resuming
        self.standalone = Route(STANDALONE)
        self.backlog: deque[Item] | None = None  # made on first use: an empty deque is ~600 bytes
        self.last_seen = monotonic()
        self.active = 0  # POSTs in flight and open GET streams; a session with any is never idle
        self.version: str | None = None  # negotiated, once the initialize response went out
        self.init_id: RequestId | None = None
        self.closed = False
        # what made it stop serving (a cluster's store failing it): a POST not answered yet is refused with it
        self.failure: Exception | None = None
        self.client: str | None = None  # who holds it, when the server can tell (`clients`)
        self.principal: str | None = None  # whose access token opened it, on a protected server
        self.pre_agreed: str | None = None  # a sessionless POST's version, served without initialize
        self._stream_ids = itertools.count(1)
        self._local_ids = itertools.count(1)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """While an HTTP request is using the session: it is not idle, and was last seen at the end."""
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
            self.last_seen = monotonic()

    def open_route(self, rid: RequestId, stored: bool, prime_retry_ms: int | None) -> Route:
        route = Route(self.new_stream_id() if stored else None, prime_retry_ms)
        self.routes[rid] = route
        if route.stream_id is not None:
            self.streams[route.stream_id] = route
        return route

    def new_stream_id(self) -> str:
        """The id of a request's stream, unique within the session."""
        return f"p{next(self._stream_ids)}"

    def close_route(self, rid: RequestId, route: Route) -> None:
        route.finish()
        if self.routes.get(rid) is route:
            del self.routes[rid]
        if route.stream_id is not None and self.streams.get(route.stream_id) is route:
            del self.streams[route.stream_id]

    async def record(self, stream_id: str | None, data: bytes, final: bool = False) -> str | None:
        """Store one event (`final`: the response that ends its stream) and return its id (a local id
        when there is no store; None if not stored)."""
        if stream_id is None or self.closed:
            return None
        if self.store is None or self.session_id is None:
            return format_event_id(stream_id, next(self._local_ids))
        return await self.store.store(self.session_id, stream_id, data)

    async def record_priming(self, stream_id: str | None) -> str | None:
        """Store the id-only event a stream opens with from 2025-11-25 (`record` of no data); its id."""
        return await self.record(stream_id, b"")

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        facts: dict[Any, Callable[[], Any]] = {}
        if self.pre_agreed is not None:
            facts[StreamAttribute.pre_agreed] = lambda: self.pre_agreed
        if self.session_id is not None:
            facts[StreamAttribute.session_id] = lambda: self.session_id
        return facts

    async def deliver_to(self, deliver: Deliver) -> None:
        """Let POSTs hand their messages to `deliver` from now on, until the session closes."""
        if self.closed:
            return
        self._ended = anyio.Event()
        self._deliver = deliver
        if self._started is not None:
            self._started.set()
        try:
            await self._ended.wait()
        finally:
            self._deliver = None

    async def send(self, out: Outgoing) -> None:
        related, data = out.related, out.data
        route = self.routes.get(related) if related is not None else None
        answers = out.answers
        if related is None or route is None:
            if related is not None and answers == related:
                return  # answers a cancelled request: a GET stream MUST NOT carry responses
            await self.send_standalone(data)
            return
        final = answers == related
        if final and related == self.init_id and self.version is None:
            self.version = agreed_version(out.decoded)
            await self.agreed(out)
        event_id = await self.record(route.stream_id, data, final)
        delivered = await route.offer(Item(event_id, data, final, _error_code(out) if final else None))
        if final:
            self.close_route(related, route)
        elif not delivered and route.stream_id is None:
            await self.send_standalone(data)  # an unstored stream's messages are not left behind

    async def agreed(self, out: Outgoing) -> None:
        """The initialize response `out` is about to go out, with the session's `version` agreed."""

    async def send_standalone(self, data: bytes) -> None:
        item = Item(await self.record(STANDALONE, data), data)
        if not await self.standalone.offer(item):
            if self.backlog is None:
                self.backlog = deque(maxlen=_BACKLOG)
            self.backlog.append(item)

    async def push(self, data: bytes | JSON, origin: Origin | None = None) -> None:
        """Hand an inbound message, as bytes or as the object the app decoded it into, and what is
        known of its HTTP request, to the Session serving it, in this task: its request starts before
        this returns. Raises HTTPRefusal 404 once the session has ended."""
        deliver = self._deliver
        if deliver is None and not self.closed:  # the Session is not running yet: wait for it
            if self._started is None:
                self._started = anyio.Event()
            await self._started.wait()
            deliver = self._deliver
        if deliver is None or self.closed:
            raise HTTPRefusal(404, "Session not found", SESSION_NOT_FOUND)
        await deliver(Inbound(data, origin))

    def close(self) -> None:
        self.closed = True
        if self._ended is not None:
            self._ended.set()
        if self._started is not None:
            self._started.set()
        for route in [*self.routes.values(), self.standalone]:
            route.finish()

    async def aclose(self) -> None:
        self.close()


def _error_code(out: Outgoing) -> int | None:
    error = out.decoded.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None
