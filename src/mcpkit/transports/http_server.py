"""Streamable HTTP, server side: a plain ASGI callable serving MCP sessions (transports "Streamable HTTP").

One POST carries one JSON-RPC message. A request is answered on that POST, as JSON or as an SSE stream of
every message the server sends with `related` equal to its id; messages related to nothing go to the
session's standalone GET stream. Each session is one `serve(stream)` call (see http_sessions), its tasks
hosted as http_hosting describes. Every SSE event is stored in an EventStore first, and a GET with
Last-Event-ID replays the events that followed on the stream that id names, then goes on live.

Security defaults (transports "Security Warning"): a Host outside `allowed_hosts` gets 421 Misdirected
Request (DNS rebinding), a present Origin outside `allowed_origins` gets 403. Both default to localhost,
127.0.0.1 and [::1] on any port; an entry without a port matches any port, and "*" matches everything.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from time import monotonic
from typing import Any

import anyio

from ..protocol.errors import INTERNAL_ERROR, MCPError
from ..protocol.http_modern import repeated_fields
from ..protocol.http_rules import (
    DEFAULT_HOSTS,
    DEFAULT_ORIGINS,
    SESSION_NOT_FOUND,
    HTTPRefusal,
    PostKind,
    accepts,
    asks_for_notifications,
    guard,
    media_type,
    post_kind,
    request_version,
)
from ..protocol.jsonrpc import Message, Notification, Request, classify, decode, encode, error_message
from ..protocol.utilities import read_cancel
from ..protocol.versions import Feature, has
from .event_store import EventStore, InMemoryEventStore
from .http_asgi import (
    JSON_HEADERS,
    ASGIMessage,
    Disconnected,
    Receive,
    Scope,
    Send,
    read_body,
    refuse,
    respond,
)
from .http_clients import ClientCounts, SessionKey, client_address
from .http_exchange import Exchange
from .http_registry import SessionRegistry
from .http_sessions import SessionStream
from .http_stateless import HeaderMirror, MirrorsHeaders, answer_stateless, header_mirror_of
from .http_streams import prime, reply_json, resume, stream_standalone, write_sse

__all__ = [
    "HeaderMirror",
    "MirrorsHeaders",
    "SessionStream",
    "StreamableHTTPApp",
    "client_address",
    "serve_http",
]

log = logging.getLogger(__name__)

_NO_SESSION = (
    "carries no Mcp-Session-Id header: this server keeps sessions, so send initialize first and name the "
    "session it returns (a 2026-07-28 request carries its version in _meta and needs no session)"
)
_RENAMED = "StreamableHTTPApp(stateless=) is now sessionless=: 'stateless' names the 2026-07-28 era"
# Handshake-era headers a request must not repeat (a proxy and this server could read different copies).
_SINGLE = frozenset({"mcp-session-id", "mcp-protocol-version", "last-event-id"})


class StreamableHTTPApp:
    """An ASGI app serving `target` (anything with async `serve(stream)`, or that function) at `path`.

    `event_store` keeps sent SSE events for resumption; the default is an InMemoryEventStore.
    `strict_version` refuses an MCP-Protocol-Version other than the session's negotiated one (400).
    `max_sessions` bounds the sessions of all clients together, so one client could hold them all;
    `session_key` (a request's scope -> a client identity, e.g. `client_address` or a token's subject;
    None: unidentified) lets the server cap each identified client at `max_sessions_per_client`
    sessions and `max_stateless_in_flight_per_client` requests in flight without a session (429 beyond).
    `sessionless` keeps no sessions: each handshake-era POST is served alone, at the version its header
    names, and GET and DELETE are 405 (`stateless=` is its deprecated old name). 2026-07-28 requests are
    served statelessly either way; `header_mirror` names a tool's `x-mcp-header` parameters for them
    (default: the target's, when it is a `MirrorsHeaders` such as a Server).
    """

    def __init__(
        self,
        target: Any,
        *,
        path: str = "/mcp",
        json_response: bool = False,
        sessionless: bool = False,
        header_mirror: HeaderMirror | None = None,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        max_body: int = 4 * 1024 * 1024,
        session_idle_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        body_timeout: float = 30.0,
        retry_ms: int = 1000,
        event_store: EventStore | None = None,
        strict_version: bool = False,
        session_key: SessionKey | None = None,
        max_sessions_per_client: int = 100,
        max_stateless_in_flight_per_client: int = 100,
        stateless: bool | None = None,
    ) -> None:
        serve: Callable[[SessionStream], Awaitable[None]] = getattr(target, "serve", target)
        self.path = path
        self.json_response = json_response
        if stateless is not None:
            warnings.warn(_RENAMED, DeprecationWarning, stacklevel=2)
            sessionless = sessionless or stateless
        self.sessionless = sessionless
        self.allowed_origins = tuple(o.lower() for o in (allowed_origins or DEFAULT_ORIGINS))
        self.allowed_hosts = tuple(h.lower() for h in (allowed_hosts or DEFAULT_HOSTS))
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.retry_ms = retry_ms  # the SSE `retry` a client waits before reconnecting a dropped stream
        # MCP-Protocol-Version must equal the session's negotiated version, not just be supported
        self.strict_version = strict_version
        self.event_store: EventStore = event_store if event_store is not None else InMemoryEventStore()
        self.session_key = session_key
        self._registry = SessionRegistry(
            serve,
            self.event_store,
            max_sessions=max_sessions,
            idle_timeout=session_idle_timeout,
            max_sessions_per_client=max_sessions_per_client,
        )
        self._stateless_clients = ClientCounts("requests in flight", max_stateless_in_flight_per_client)
        self.sessions = self._registry.sessions
        self._mirror = header_mirror if header_mirror is not None else header_mirror_of(target)

    @property
    def stateless(self) -> bool:
        """Deprecated: `sessionless`."""
        return self.sessionless

    # ---- ASGI ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._registry.lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def aclose(self) -> None:
        """End every session, and the task group hosted without lifespan (if one was started)."""
        await self._registry.aclose()

    def _session_of(self, headers: dict[str, str], what: str = "") -> tuple[SessionStream, str]:
        """The session a request names, and the protocol version it speaks (checked against the session's)."""
        sid = headers.get("mcp-session-id")
        if sid is None:
            raise HTTPRefusal(400, f"Bad Request: {what or 'this request'} {_NO_SESSION}")
        session = self.sessions.get(sid)
        if session is None:
            raise HTTPRefusal(404, "Session not found", SESSION_NOT_FOUND)
        version = request_version(headers.get("mcp-protocol-version"), session.version, self.strict_version)
        return session, version

    # ---- HTTP --------------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked(message: ASGIMessage) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._route(scope, receive, tracked)
        except HTTPRefusal as refusal:
            await refuse(send, refusal)
        except Disconnected:
            pass
        except Exception:
            log.exception("Streamable HTTP request failed")
            if not started:
                body = encode(error_message(None, {"code": INTERNAL_ERROR, "message": "Internal error"}))
                await respond(send, 500, body, JSON_HEADERS)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope["headers"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}
        # only a request that repeats a header pays for finding which
        repeated = repeated_fields(raw) if len(headers) < len(raw) else frozenset()
        if _path(scope) != self.path:
            raise HTTPRefusal(404, "Not Found")
        guard(headers, self.allowed_hosts, self.allowed_origins)
        exchange = Exchange(headers, receive, send, repeated)
        method = scope["method"]
        if method == "POST":
            exchange.client = self.session_key(scope) if self.session_key is not None else None
            await self._post(exchange)
            return
        _refuse_repeats(repeated, _SINGLE)  # a POST is checked once its era is known
        if method == "GET" and not self.sessionless:
            await self._get(exchange)
        elif method == "DELETE" and not self.sessionless:
            session, _ = self._session_of(headers, "DELETE")
            self._registry.end(session.session_id or "")
            await respond(send, 204, b"", [])
        else:
            allow = "POST" if self.sessionless else "GET, POST, DELETE"
            raise HTTPRefusal(405, "Method Not Allowed", allow=allow)

    async def _post(self, exchange: Exchange) -> None:
        headers = exchange.headers
        _check_content_headers(headers)
        exchange.body = await read_body(headers, exchange.receive, self.max_body, self.body_timeout)
        exchange.message = message = await self._parse(exchange)
        kind = post_kind(headers, message, keeps_sessions=not self.sessionless)
        if kind is PostKind.STATELESS_ERA:
            run, json_only = self._registry.run, self.json_response
            with self._in_flight(exchange):
                await answer_stateless(run, self._mirror, exchange, json_only=json_only)
            return
        _refuse_repeats(exchange.repeated, _SINGLE)
        exchange.version = request_version(headers.get("mcp-protocol-version"), None)
        if kind is PostKind.IN_SESSION:
            session, exchange.version = self._session_of(headers, _what(message))
            await self._deliver(session, exchange)
            return
        if kind is PostKind.SESSIONLESS:
            with self._in_flight(exchange):
                await self._post_sessionless(exchange)
        else:
            session = await self._registry.new(exchange.client)
            exchange.response_headers.append((b"mcp-session-id", (session.session_id or "").encode()))
            await self._deliver(session, exchange)

    async def _parse(self, exchange: Exchange) -> Message:
        """The POSTed message; 400 for one that is not JSON-RPC."""
        try:
            return classify(decode(exchange.body))
        except MCPError as exc:
            if getattr(exc, "response", False) and "mcp-session-id" in exchange.headers:
                # a malformed answer to the server's request: its session fails that request at once
                session, _ = self._session_of(exchange.headers, "a response")
                await session.push(exchange.body)
            raise HTTPRefusal(400, exc.message, exc.code) from None

    async def _post_sessionless(self, exchange: Exchange) -> None:
        """One message served alone; anything but an initialize at its version, without a handshake."""
        message = exchange.message
        session = SessionStream(None)
        if not (isinstance(message, Request) and message.method == "initialize"):
            session.pre_agreed = exchange.version
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._registry.run, session)
            await self._deliver(session, exchange)
            session.close()

    @contextmanager
    def _in_flight(self, exchange: Exchange) -> Iterator[None]:
        """A request without a session counted against its client's share; 429 (with its id) past it."""
        try:
            self._stateless_clients.acquire(exchange.client)
        except HTTPRefusal as refusal:
            refusal.rid = exchange.message.id if isinstance(exchange.message, Request) else None
            raise
        try:
            yield
        finally:
            self._stateless_clients.release(exchange.client)

    def _retry_for(self, version: str) -> int | None:
        return self.retry_ms if has(version, Feature.SSE_PRIMING) else None

    async def _deliver(self, session: SessionStream, exchange: Exchange) -> None:
        session.last_seen = monotonic()
        message = exchange.message
        if not isinstance(message, Request):
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                named = read_cancel(message.params)
                cancelled = session.routes.get(named[0]) if named is not None else None
                if named is not None and cancelled is not None:  # no response will come: its stream ends
                    session.close_route(named[0], cancelled)
            await session.push(exchange.body)
            await respond(exchange.send, 202, b"", [])
            return
        if message.id in session.routes:
            raise HTTPRefusal(400, f"Bad Request: request id {message.id!r} is already in flight")
        if message.method == "initialize":
            session.init_id = message.id
        with session.busy():
            await self._answer(session, exchange, message)

    async def _answer(self, session: SessionStream, exchange: Exchange, request: Request) -> None:
        """Hand the request to `serve` and answer it: an SSE stream, or JSON in json_response mode
        unless the request asked for notifications (a progressToken), which JSON has no room for."""
        sse = not self.json_response or asks_for_notifications(request.method, request.params)
        route = session.open_route(request.id, sse, self._retry_for(exchange.version) if sse else None)
        receiver = route.attach()
        try:
            first = await prime(session, route)
            try:
                await session.push(exchange.body)
            except HTTPRefusal:
                session.close_route(request.id, route)
                raise
            if sse:
                await write_sse(route, receiver, exchange, first=first)
            else:
                await reply_json(session, receiver, request.id, exchange)
        finally:
            route.detach(receiver)
            if not sse:  # a stored stream outlives a dropped POST: the rest is kept for a resume
                session.close_route(request.id, route)

    async def _get(self, exchange: Exchange) -> None:
        if not accepts(exchange.headers, "text/event-stream"):
            raise HTTPRefusal(406, "Not Acceptable: Accept must include text/event-stream")
        session, version = self._session_of(exchange.headers, "GET")
        last_event_id = exchange.headers.get("last-event-id")
        with session.busy():
            if last_event_id is not None:
                await resume(session, self.event_store, last_event_id, exchange)
            else:
                await stream_standalone(session, self._retry_for(version), exchange)


def _path(scope: Scope) -> str:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _check_content_headers(headers: dict[str, str]) -> None:
    if not accepts(headers, "application/json", "text/event-stream"):
        raise HTTPRefusal(406, "Not Acceptable: Accept must list application/json and text/event-stream")
    if media_type(headers.get("content-type", "")) != "application/json":
        raise HTTPRefusal(415, "Unsupported Media Type: Content-Type must be application/json")


def _what(message: Message) -> str:
    return f"{message.method!r}" if isinstance(message, Request | Notification) else "a response"


def _refuse_repeats(repeated: frozenset[str], single: frozenset[str]) -> None:
    twice = repeated & single
    if twice:
        raise HTTPRefusal(400, f"Bad Request: the {min(twice)} header appears more than once")


def serve_http(target: Any, *, host: str = "127.0.0.1", port: int = 8000, **app_options: Any) -> None:
    """Serve `target` over Streamable HTTP with uvicorn until interrupted.

    Binding beyond localhost needs `allowed_hosts` (and usually `allowed_origins`) to match.
    """
    import uvicorn

    uvicorn.run(StreamableHTTPApp(target, **app_options), host=host, port=port, lifespan="on")
