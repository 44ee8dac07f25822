"""Streamable HTTP, server side: a plain ASGI callable serving MCP sessions (transports "Streamable HTTP").

One POST carries one JSON-RPC message. A request is answered on that POST, as JSON or as an SSE stream of
every message the server sends with `related` equal to its id; messages related to nothing go to the
session's standalone GET stream. Each session is one `serve(stream)` call (see `sessions`), its tasks
hosted as `hosting` describes. Every SSE event is stored in an EventStore first, and a GET with
Last-Event-ID replays the events that followed on the stream that id names, then goes on live.

Security defaults (transports "Security Warning"): a Host outside `allowed_hosts` gets 421 Misdirected
Request (DNS rebinding), a present Origin outside `allowed_origins` gets 403. Both default to localhost,
127.0.0.1 and [::1] on any port; an entry without a port matches any port, and "*" matches everything.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio

from ...protocol.errors import MCPError
from ...protocol.http_rules import (
    DEFAULT_HOSTS,
    DEFAULT_ORIGINS,
    HTTPRefusal,
    PostKind,
    accepts,
    check_post_headers,
    guard,
    post_kind,
    refuse_repeats,
    request_version,
)
from ...protocol.http_stateless import repeated_fields
from ...protocol.jsonrpc import (
    InvalidMessage,
    Message,
    Request,
    RequestId,
    classify,
    decode,
)
from ...protocol.resource_auth import AccessToken, AuthRefusal
from .asgi import AUTH_SCOPE_KEY, Receive, Scope, Send, endpoint_path, handle, read_body, respond
from .clients import ClientCounts, SessionKey, client_address
from .delivery import Answering, serve_alone
from .drain import Drain
from .event_store import EventStore, InMemoryEventStore
from .exchange import Exchange
from .heartbeat import TRACKED_SCOPE_KEY, Tracked
from .local_sessions import LocalSessions
from .probes import Operations, Probes
from .registry import SessionRegistry
from .sessions import SessionStream
from .shared import Backplane, SessionHost
from .stateless import HeaderMirror, answer_stateless, header_mirror_of, scopes_of

__all__ = ["StreamableHTTPApp", "serve_http"]

_RENAMED = "StreamableHTTPApp(stateless=) is now sessionless=: 'stateless' names the 2026-07-28 era"


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
    `backplane` (mcpkit.cluster.RedisBackplane) keeps sessions where every worker of a cluster serves
    them: no sticky routing, and a worker's death loses only the handlers it was running.
    `operations` (an `Operations`) adds the probes (`/healthz`, `/readyz`, the backplane's reachability
    included), SSE heartbeats and a graceful drain on SIGTERM (`drain()`); None: none of them.
    `sessions`: this process's sessions, by id.
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
        backplane: Backplane | None = None,
        operations: Operations | None = None,
    ) -> None:
        serve: Callable[[SessionStream], Awaitable[None]] = getattr(target, "serve", target)
        self.path, self.session_key = path, session_key
        self.sessionless = sessionless or _renamed_stateless(stateless)
        self.allowed_origins = tuple(o.lower() for o in (allowed_origins or DEFAULT_ORIGINS))
        self.allowed_hosts = tuple(h.lower() for h in (allowed_hosts or DEFAULT_HOSTS))
        self.max_body, self.body_timeout = max_body, body_timeout
        self.json_response, self.retry_ms = json_response, retry_ms  # retry_ms: SSE `retry`, for reconnects
        self._answering = Answering(json_response, retry_ms)
        self.strict_version = strict_version  # MCP-Protocol-Version must be the session's, not just known
        self.event_store: EventStore = event_store if event_store is not None else InMemoryEventStore()
        shared_host = _host_from(backplane, serve, target, self._answering, strict_version)
        self._registry = SessionRegistry(
            serve,
            self.event_store,
            max_sessions=max_sessions,
            idle_timeout=session_idle_timeout,
            max_sessions_per_client=max_sessions_per_client,
            background=shared_host.run if shared_host is not None else None,
            hold=getattr(getattr(target, "lifespan", None), "running", None),  # a Server's lifespan
            check=backplane.started if backplane is not None else None,
        )
        self._host: SessionHost = shared_host or self._local_sessions()
        self._sessionless_clients = ClientCounts("requests in flight", max_stateless_in_flight_per_client)
        self.sessions, self._scopes_for = self._registry.sessions, scopes_of(target)
        self._mirror = header_mirror if header_mirror is not None else header_mirror_of(target)
        self._probes, self._drain = _operations(operations, backplane, self._registry, self._host, retry_ms)

    def _local_sessions(self) -> LocalSessions:
        return LocalSessions(
            self._registry, self.event_store, self._answering, strict_version=self.strict_version
        )

    @property
    def stateless(self) -> bool:
        """Deprecated: `sessionless`."""
        return self.sessionless

    # ---- ASGI ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._drain is not None:
            scope[TRACKED_SCOPE_KEY] = tracked = self._drain.entered(send)
            try:
                await handle(self._route, scope, receive, tracked)
            finally:
                self._drain.left(tracked)
        elif scope["type"] == "http":
            await handle(self._route, scope, receive, send)
        elif scope["type"] == "lifespan" and self._drain is not None and self._probes is not None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._drain.run)
                await self._registry.lifespan(receive, self._probes.watch_lifespan(send))
                tg.cancel_scope.cancel()
        elif scope["type"] == "lifespan":
            await self._registry.lifespan(receive, send)

    def drain(self) -> None:
        """Begin a graceful drain (what SIGTERM does with `operations`); needs `operations`."""
        if self._drain is None:
            raise RuntimeError("drain() needs StreamableHTTPApp(operations=Operations())")
        self._drain.drain()

    async def aclose(self) -> None:
        """End every session, and the task group hosted without lifespan (if one was started)."""
        await self._registry.aclose()
        await self._host.aclose()

    # ---- HTTP --------------------------------------------------------------------------------

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope["headers"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}
        # only a request that repeats a header pays for finding which
        repeated = repeated_fields(raw) if len(headers) < len(raw) else frozenset()
        if endpoint_path(scope) != self.path:
            if self._probes is None or not await self._probes.answer(scope, send):
                raise HTTPRefusal(404, "Not Found")
            return
        guard(headers, self.allowed_hosts, self.allowed_origins)
        exchange = Exchange(headers, receive, send, repeated, auth=scope.get(AUTH_SCOPE_KEY))
        method = scope["method"]
        if method == "POST":
            exchange.client = self.session_key(scope) if self.session_key is not None else None
            exchange.peer = client_address(scope)
            await self._post(exchange)
            return
        refuse_repeats(repeated)  # a POST is checked once its era is known
        if method == "GET" and not self.sessionless:
            await self._get(exchange, scope.get(TRACKED_SCOPE_KEY))
        elif method == "DELETE" and not self.sessionless:
            await self._registry.hosted()
            await self._host.delete(exchange)
        else:
            allow = "POST" if self.sessionless else "GET, POST, DELETE"
            raise HTTPRefusal(405, "Method Not Allowed", allow=allow)

    async def _post(self, exchange: Exchange) -> None:
        headers = exchange.headers
        check_post_headers(headers)
        exchange.body = await read_body(headers, exchange.receive, self.max_body, self.body_timeout)
        exchange.message = message = await self._parse(exchange)
        if exchange.auth is not None and isinstance(message, Request):
            self._check_scopes(exchange.auth, message)
        kind = post_kind(headers, message, keeps_sessions=not self.sessionless)
        if kind is PostKind.STATELESS_NOTICE:
            await respond(exchange.send, 202, b"", [])
            return
        if kind is PostKind.STATELESS_ERA:
            run, json_only = self._registry.run, self._answering.json_response
            with self._sessionless_clients.held(exchange.client, _rid(message)):
                await answer_stateless(run, self._mirror, exchange, json_only=json_only)
            return
        refuse_repeats(exchange.repeated)
        exchange.version = request_version(headers.get("mcp-protocol-version"), None)
        if self._drain is not None and kind is PostKind.NEW_SESSION:
            self._drain.refuse_new("sessions")
        if kind is PostKind.SESSIONLESS:
            with self._sessionless_clients.held(exchange.client, _rid(message)):
                await serve_alone(self._registry.run, exchange, self._answering)
            return
        await self._registry.hosted()
        await (self._host.post(exchange) if kind is PostKind.IN_SESSION else self._host.new(exchange))

    def _check_scopes(self, auth: AccessToken, request: Request) -> None:
        """AuthRefusal 403 insufficient_scope for a request naming an item its token may not use (of
        those its caller sees); the protect() wrapper words it as a WWW-Authenticate challenge
        (authorization "Scope Challenge")."""
        needed = self._scopes_for(request.method, request.params, auth)
        missing = needed - auth.scopes
        if missing:
            reason = f"{request.method} needs {' '.join(sorted(missing))}"
            raise AuthRefusal(403, "insufficient_scope", reason, tuple(sorted(needed)))

    async def _parse(self, exchange: Exchange) -> Message:
        """The POSTed message; 400 for one that is not JSON-RPC."""
        try:
            decoded = decode(exchange.body)
            message = classify(decoded)
        except MCPError as exc:
            if isinstance(exc, InvalidMessage) and exc.response and "mcp-session-id" in exchange.headers:
                # a malformed answer to the server's request: its session fails that request at once
                session, _ = self._registry.find(
                    exchange.headers, "a response", self.strict_version, exchange.principal
                )
                await session.push(exchange.body, exchange.origin(session.session_id))
            raise HTTPRefusal(400, exc.message, exc.code) from None
        exchange.decoded = decoded
        return message

    async def _get(self, exchange: Exchange, tracked: Tracked | None) -> None:
        if not accepts(exchange.headers, "text/event-stream"):
            raise HTTPRefusal(406, "Not Acceptable: Accept must include text/event-stream")
        await self._registry.hosted()
        if self._drain is None or tracked is None:
            await self._host.get(exchange)
            return
        async with self._drain.stream(tracked):
            await self._host.get(exchange)


def _renamed_stateless(stateless: bool | None) -> bool:
    if stateless is None:
        return False
    warnings.warn(_RENAMED, DeprecationWarning, stacklevel=3)
    return stateless


def _host_from(
    backplane: Backplane | None,
    serve: Callable[[SessionStream], Awaitable[None]],
    target: Any,
    answering: Answering,
    strict_version: bool,
) -> SessionHost | None:
    if backplane is None:
        return None
    return backplane.sessions(serve, target, answering, strict_version=strict_version)


def _operations(
    operations: Operations | None,
    backplane: Backplane | None,
    registry: SessionRegistry,
    host: SessionHost,
    retry_ms: int,
) -> tuple[Probes | None, Drain | None]:
    if operations is None:
        return None, None
    probes = Probes(operations, [backplane.ready] if backplane is not None else [])

    async def end_all() -> None:
        await host.end_all()
        await registry.end_alone()

    drain = Drain(probes, end_all, retry_ms)
    if operations.metrics is not None:
        operations.metrics.observe("mcp.server.sessions", lambda: len(registry.sessions))
        operations.metrics.observe("mcp.server.sse_streams", lambda: drain.streams)
        if backplane is not None:
            backplane.measure(operations.metrics)
    return probes, drain


def _rid(message: Message) -> RequestId | None:
    return message.id if isinstance(message, Request) else None


def serve_http(target: Any, *, host: str = "127.0.0.1", port: int = 8000, **app_options: Any) -> None:
    """Serve `target` over Streamable HTTP with uvicorn until interrupted.

    Binding beyond localhost needs `allowed_hosts` (and usually `allowed_origins`) to match.
    """
    import uvicorn

    uvicorn.run(StreamableHTTPApp(target, **app_options), host=host, port=port, lifespan="on")
