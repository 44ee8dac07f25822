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
    accepts,
    allowed,
    asks_for_notifications,
    media_type,
    request_version,
)
from ..protocol.jsonrpc import Notification, Request, classify, decode, encode, error_message
from ..protocol.modern import is_modern_request
from ..protocol.utilities import read_cancel
from ..protocol.versions import SUPPORTED_VERSIONS, Feature, has, is_modern
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
from .http_registry import SessionRegistry
from .http_sessions import SessionStream, stateless_handshake
from .http_stateless import answer_stateless, mirrored_for
from .http_streams import prime, reply_json, resume, stream_standalone, write_sse

__all__ = ["SessionStream", "StreamableHTTPApp", "client_address", "serve_http"]

log = logging.getLogger(__name__)

_NO_SESSION = (
    "carries no Mcp-Session-Id header: this server keeps sessions, so send initialize first and name the "
    "session it returns (a 2026-07-28 request carries its version in _meta and needs no session)"
)
# Handshake-era headers a request must not repeat (a proxy and this server could read different copies).
_SINGLE = frozenset({"mcp-session-id", "mcp-protocol-version", "last-event-id"})


class StreamableHTTPApp:
    """An ASGI app serving `target` (anything with async `serve(stream)`, or that function) at `path`.

    `event_store` keeps sent SSE events for resumption; the default is an InMemoryEventStore.
    `strict_version` refuses an MCP-Protocol-Version other than the session's negotiated one (400).
    `max_sessions` bounds the sessions of all clients together, so one client could hold them all;
    `session_key` (a request's scope -> a client identity, e.g. `client_address` or a token's subject;
    None: unidentified) lets the server cap each identified client at `max_sessions_per_client`
    sessions and `max_stateless_in_flight_per_client` stateless requests in flight (429 beyond).
    """

    def __init__(
        self,
        target: Any,
        *,
        path: str = "/mcp",
        json_response: bool = False,
        stateless: bool = False,
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
    ) -> None:
        serve: Callable[[SessionStream], Awaitable[None]] = getattr(target, "serve", target)
        self.path = path
        self.json_response = json_response
        self.stateless = stateless
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
        self._mirrored = mirrored_for(target)

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
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        if path != self.path:
            raise HTTPRefusal(404, "Not Found")
        if not allowed(headers.get("host", ""), self.allowed_hosts):
            raise HTTPRefusal(421, "Misdirected Request: Host not allowed")
        origin = headers.get("origin")
        if origin is not None and not allowed(origin, self.allowed_origins):
            raise HTTPRefusal(403, "Forbidden: Origin not allowed")
        method = scope["method"]
        if method != "POST":  # a POST is checked once its era is known (a modern one by Server Validation)
            _refuse_repeats(repeated, _SINGLE)
        if method == "POST":
            client = self.session_key(scope) if self.session_key is not None else None
            await self._post(headers, repeated, client, receive, send)
        elif method == "GET" and not self.stateless:
            await self._get(headers, receive, send)
        elif method == "DELETE" and not self.stateless:
            session, _ = self._session_of(headers, "DELETE")
            self._registry.end(session.session_id or "")
            await respond(send, 204, b"", [])
        else:
            allow = "POST" if self.stateless else "GET, POST, DELETE"
            raise HTTPRefusal(405, "Method Not Allowed", allow=allow)

    async def _post(
        self,
        headers: dict[str, str],
        repeated: frozenset[str],
        client: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        if not accepts(headers, "application/json", "text/event-stream"):
            raise HTTPRefusal(406, "Not Acceptable: Accept must list application/json and text/event-stream")
        if media_type(headers.get("content-type", "")) != "application/json":
            raise HTTPRefusal(415, "Unsupported Media Type: Content-Type must be application/json")
        body = await read_body(headers, receive, self.max_body, self.body_timeout)
        try:
            message = classify(decode(body))
        except MCPError as exc:
            if getattr(exc, "response", False) and "mcp-session-id" in headers:
                # a malformed answer to the server's request: its session fails that request at once
                session, _ = self._session_of(headers, "a response")
                await session.push(body)
            raise HTTPRefusal(400, exc.message, exc.code) from None
        if isinstance(message, Request) and _stateless_era(headers, message):
            run, mirrored = self._registry.run, self._mirrored
            json_only = self.json_response
            with self._in_flight(client, message):
                await answer_stateless(
                    run,
                    mirrored,
                    headers,
                    message,
                    body,
                    receive,
                    send,
                    json_only=json_only,
                    repeated=repeated,
                )
            return
        _refuse_repeats(repeated, _SINGLE)
        header_version = request_version(headers.get("mcp-protocol-version"), None)
        is_init = isinstance(message, Request) and message.method == "initialize"
        if self.stateless:
            with self._in_flight(client, message):
                await self._post_stateless(message, body, header_version, is_init, receive, send)
        elif is_init and "mcp-session-id" not in headers:
            session = await self._registry.new(client)
            await self._deliver(session, message, body, receive, send, header_version, include_session=True)
        else:
            what = f"{message.method!r}" if isinstance(message, Request | Notification) else "a response"
            session, version = self._session_of(headers, what)
            await self._deliver(session, message, body, receive, send, version)

    async def _post_stateless(
        self, message: Any, body: bytes, version: str, is_init: bool, receive: Receive, send: Send
    ) -> None:
        session = SessionStream(None)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._registry.run, session)
            if not is_init:
                await stateless_handshake(session, version)
            await self._deliver(session, message, body, receive, send, version)
            session.close()

    @contextmanager
    def _in_flight(self, client: str | None, message: Any) -> Iterator[None]:
        """A stateless request counted against its client's share; 429 (with the request's id) past it."""
        try:
            self._stateless_clients.acquire(client)
        except HTTPRefusal as refusal:
            refusal.rid = message.id if isinstance(message, Request) else None
            raise
        try:
            yield
        finally:
            self._stateless_clients.release(client)

    def _retry_for(self, version: str) -> int | None:
        return self.retry_ms if has(version, Feature.SSE_PRIMING) else None

    async def _deliver(
        self,
        session: SessionStream,
        message: Any,
        body: bytes,
        receive: Receive,
        send: Send,
        version: str,
        include_session: bool = False,
    ) -> None:
        session.last_seen = monotonic()
        if not isinstance(message, Request):
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                named = read_cancel(message.params)
                cancelled = session.routes.get(named[0]) if named is not None else None
                if named is not None and cancelled is not None:  # no response will come: its stream ends
                    session.close_route(named[0], cancelled)
            await session.push(body)
            await respond(send, 202, b"", [])
            return
        if message.id in session.routes:
            raise HTTPRefusal(400, f"Bad Request: request id {message.id!r} is already in flight")
        if message.method == "initialize":
            session.init_id = message.id
        sid = session.session_id
        extra = [(b"mcp-session-id", sid.encode())] if include_session and sid else []
        with session.busy():
            await self._answer(session, message, body, receive, send, version, extra)

    async def _answer(
        self,
        session: SessionStream,
        message: Request,
        body: bytes,
        receive: Receive,
        send: Send,
        version: str,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Hand the request to `serve` and answer it: an SSE stream, or JSON in json_response mode
        unless the request asked for notifications (a progressToken), which JSON has no room for."""
        sse = not self.json_response or asks_for_notifications(message.method, message.params)
        route = session.open_route(message.id, sse, self._retry_for(version) if sse else None)
        receiver = route.attach()
        try:
            first = await prime(session, route)
            try:
                await session.push(body)
            except HTTPRefusal:
                session.close_route(message.id, route)
                raise
            if sse:
                await write_sse(route, receiver, receive, send, first=first, extra=extra)
            else:
                await reply_json(session, receiver, message.id, receive, send, extra)
        finally:
            route.detach(receiver)
            if not sse:  # a stored stream outlives a dropped POST: the rest is kept for a resume
                session.close_route(message.id, route)

    async def _get(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        if not accepts(headers, "text/event-stream"):
            raise HTTPRefusal(406, "Not Acceptable: Accept must include text/event-stream")
        session, version = self._session_of(headers, "GET")
        last_event_id = headers.get("last-event-id")
        with session.busy():
            if last_event_id is not None:
                await resume(session, self.event_store, last_event_id, receive, send)
            else:
                await stream_standalone(session, self._retry_for(version), receive, send)


def _refuse_repeats(repeated: frozenset[str], single: frozenset[str]) -> None:
    twice = repeated & single
    if twice:
        raise HTTPRefusal(400, f"Bad Request: the {min(twice)} header appears more than once")


def _stateless_era(headers: dict[str, str], message: Request) -> bool:
    """versioning "Backward Compatibility": the modern `_meta`, or a modern MCP-Protocol-Version,
    selects the stateless era; everything else (initialize, a session) the handshake era."""
    header = headers.get("mcp-protocol-version")
    return is_modern_request(message.params) or (header in SUPPORTED_VERSIONS and is_modern(header))


def serve_http(target: Any, *, host: str = "127.0.0.1", port: int = 8000, **app_options: Any) -> None:
    """Serve `target` over Streamable HTTP with uvicorn until interrupted.

    Binding beyond localhost needs `allowed_hosts` (and usually `allowed_origins`) to match.
    """
    import uvicorn

    uvicorn.run(StreamableHTTPApp(target, **app_options), host=host, port=port, lifespan="on")
