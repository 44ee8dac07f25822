"""Streamable HTTP, server side: a plain ASGI callable serving MCP sessions (transports "Streamable HTTP").

One POST carries one JSON-RPC message. A request is answered on that POST, as JSON or as an SSE stream of
every message the server sends with `related` equal to its id; messages related to nothing (or to a request
whose POST is gone) go to the session's standalone GET stream. Each session is one `serve(stream)` call.

Where session tasks live: in a task group the app enters on ASGI lifespan startup (uvicorn). Without
lifespan (httpx.ASGITransport, a mount whose router does not forward lifespan) the app hosts that task group
in a detached asyncio task started by the first request, so sessions outlive the request that made them;
call `aclose()` to end it. Stateless POSTs need neither: their session lives inside the request.

Security defaults (transports "Security Warning"): a Host outside `allowed_hosts` gets 421 Misdirected
Request (DNS rebinding), a present Origin outside `allowed_origins` gets 403. Both default to localhost,
127.0.0.1 and [::1] on any port; an entry without a port matches any port, and "*" matches everything.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, MCPError
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import Notification, Request, RequestId, classify, decode, encode, error_message
from ..protocol.sse import encode_event
from ..protocol.versions import SUPPORTED_VERSIONS, V2025_03_26, Feature, has

__all__ = ["SessionStream", "StreamableHTTPApp", "serve_http"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
Send = Callable[[ASGIMessage], Awaitable[None]]

_LOCAL = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_HOSTS = _LOCAL
DEFAULT_ORIGINS = tuple(f"{scheme}://{host}" for scheme in ("http", "https") for host in _LOCAL)
_ROUTE_BUFFER = 256
_BACKLOG = 64  # messages kept for a standalone stream that is not open yet; older ones are dropped
_SESSION_NOT_FOUND = -32001
_PORT = re.compile(r"(.*?)(:\d+)?")
_SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_JSON_HEADERS = [(b"content-type", b"application/json")]


class _HTTPError(Exception):
    """Refused before any response started: becomes a status and a JSON-RPC error body."""

    def __init__(self, status: int, message: str, code: int = INVALID_REQUEST, **headers: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, headers


class _Disconnected(Exception):
    pass


class _Route:
    """Where the messages related to one request (or to the standalone stream) wait for their writer."""

    def __init__(self, prime_retry_ms: int | None = None) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[bytes](_ROUTE_BUFFER)
        # transports "Resumability": from 2025-11-25 a stream opens with an id-only priming event.
        self.prime_retry_ms = prime_retry_ms

    def priming_event(self, session: SessionStream) -> bytes | None:
        if self.prime_retry_ms is None:
            return None
        return encode_event(b"", event_id=session.next_event_id(), retry_ms=self.prime_retry_ms)

    def close(self) -> None:
        self.send.close()
        self.receive.close()


class SessionStream:
    """The MessageStream one session's `serve` sees: POST bodies come in, sent messages are routed out."""

    def __init__(self, session_id: str | None) -> None:
        self.session_id = session_id
        self._in_send, self._in_receive = anyio.create_memory_object_stream[bytes](16)
        self.routes: dict[RequestId, _Route] = {}
        self.standalone: _Route | None = None
        self.backlog: deque[bytes] = deque(maxlen=_BACKLOG)
        self.last_seen = anyio.current_time()
        self.active = 0  # POSTs in flight and open GET streams; a session with any is never idle
        self._event_ids = itertools.count(1)

    def next_event_id(self) -> str:
        return str(next(self._event_ids))

    async def receive(self) -> bytes | Oversized:
        try:
            return await self._in_receive.receive()
        except (anyio.ClosedResourceError, anyio.EndOfStream):
            raise anyio.EndOfStream from None

    async def send(self, data: bytes, related: RequestId | None = None) -> None:
        route = self.routes.get(related) if related is not None else None
        if route is not None:
            try:
                await route.send.send(data)
                return
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        await self.send_standalone(data)

    async def send_standalone(self, data: bytes) -> None:
        if self.standalone is not None:
            try:
                await self.standalone.send.send(data)
                return
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.standalone = None
        self.backlog.append(data)

    async def push(self, data: bytes) -> None:
        """Hand an inbound message to `serve`; raises _HTTPError 404 once the session has ended."""
        try:
            await self._in_send.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise _HTTPError(404, "Session not found", _SESSION_NOT_FOUND) from None

    def close(self) -> None:
        self._in_send.close()
        for route in self.routes.values():
            route.send.close()
        if self.standalone is not None:
            self.standalone.send.close()

    async def aclose(self) -> None:
        self.close()


class StreamableHTTPApp:
    """An ASGI app serving `target` (anything with async `serve(stream)`, or that function) at `path`."""

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
    ) -> None:
        self._serve: Callable[[SessionStream], Awaitable[None]] = getattr(target, "serve", target)
        self.path = path
        self.json_response = json_response
        self.stateless = stateless
        self.allowed_origins = tuple(o.lower() for o in (allowed_origins or DEFAULT_ORIGINS))
        self.allowed_hosts = tuple(h.lower() for h in (allowed_hosts or DEFAULT_HOSTS))
        self.max_body = max_body
        self.session_idle_timeout = session_idle_timeout
        self.max_sessions = max_sessions
        self.body_timeout = body_timeout
        self.retry_ms = retry_ms  # the SSE `retry` a client waits before reconnecting a dropped stream
        self.sessions: dict[str, SessionStream] = {}
        self._tg: TaskGroup | None = None
        self._hosted: anyio.Event | None = None
        self._host_task: asyncio.Task[None] | None = None

    # ---- hosting session tasks ---------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._reap)
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
            self._end_all()
            tg.cancel_scope.cancel()
        self._tg = None
        await send({"type": "lifespan.shutdown.complete"})

    async def _task_group(self) -> TaskGroup:
        if self._tg is None:
            if self._hosted is None:
                self._hosted = anyio.Event()
                self._host_task = asyncio.get_running_loop().create_task(self._host())
            await self._hosted.wait()
        assert self._tg is not None
        return self._tg

    async def _host(self) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._reap)
            assert self._hosted is not None
            self._hosted.set()
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        """End every session, and the task group hosted without lifespan (if one was started)."""
        self._end_all()
        task, self._host_task = self._host_task, None
        if task is not None:
            task.cancel()
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await asyncio.wait([task])
            self._tg, self._hosted = None, None

    async def _reap(self) -> None:
        period = max(0.01, min(self.session_idle_timeout / 4, 30.0))
        while True:
            await anyio.sleep(period)
            deadline = anyio.current_time() - self.session_idle_timeout
            for sid, session in list(self.sessions.items()):
                if session.active == 0 and session.last_seen < deadline:
                    self._end(sid)

    def _end(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def _end_all(self) -> None:
        for sid in list(self.sessions):
            self._end(sid)

    async def _run(self, session: SessionStream) -> None:
        try:
            await self._serve(session)
        except Exception:
            log.exception("MCP session %s failed", session.session_id)
        finally:
            session.close()
            if session.session_id is not None and self.sessions.get(session.session_id) is session:
                del self.sessions[session.session_id]

    async def _new_session(self) -> SessionStream:
        if len(self.sessions) >= self.max_sessions:
            raise _HTTPError(503, "Service Unavailable: too many sessions", INTERNAL_ERROR, retry_after="5")
        tg = await self._task_group()
        session = SessionStream(secrets.token_urlsafe(32))
        assert session.session_id is not None
        self.sessions[session.session_id] = session
        tg.start_soon(self._run, session)
        return session

    # ---- HTTP --------------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracked(message: ASGIMessage) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._route(scope, receive, tracked)
        except _HTTPError as exc:
            extra = [(k.replace("_", "-").encode(), v.encode()) for k, v in exc.headers.items()]
            body = encode(error_message(None, {"code": exc.code, "message": exc.message}))
            await _respond(send, exc.status, body, _JSON_HEADERS + extra)
        except _Disconnected:
            pass
        except Exception:
            log.exception("Streamable HTTP request failed")
            if not started:
                body = encode(error_message(None, {"code": INTERNAL_ERROR, "message": "Internal error"}))
                await _respond(send, 500, body, _JSON_HEADERS)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        if path != self.path:
            raise _HTTPError(404, "Not Found")
        if not _allowed(headers.get("host", ""), self.allowed_hosts):
            raise _HTTPError(421, "Misdirected Request: Host not allowed")
        origin = headers.get("origin")
        if origin is not None and not _allowed(origin, self.allowed_origins):
            raise _HTTPError(403, "Forbidden: Origin not allowed")
        method = scope["method"]
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET" and not self.stateless:
            await self._get(headers, receive, send)
        elif method == "DELETE" and not self.stateless:
            self._end(self._session_of(headers).session_id or "")
            await _respond(send, 204, b"", [])
        else:
            allow = "POST" if self.stateless else "GET, POST, DELETE"
            raise _HTTPError(405, "Method Not Allowed", allow=allow)

    def _session_of(self, headers: dict[str, str]) -> SessionStream:
        sid = headers.get("mcp-session-id")
        if sid is None:
            raise _HTTPError(400, "Bad Request: Mcp-Session-Id header is required")
        session = self.sessions.get(sid)
        if session is None:
            raise _HTTPError(404, "Session not found", _SESSION_NOT_FOUND)
        return session

    async def _post(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        if not _accepts(headers, "application/json", "text/event-stream"):
            raise _HTTPError(406, "Not Acceptable: Accept must list application/json and text/event-stream")
        if _media_type(headers.get("content-type", "")) != "application/json":
            raise _HTTPError(415, "Unsupported Media Type: Content-Type must be application/json")
        version = _version(headers)
        body = await self._read_body(headers, receive)
        try:
            message = classify(decode(body))
        except MCPError as exc:
            raise _HTTPError(400, exc.message, exc.code) from None
        is_init = isinstance(message, Request) and message.method == "initialize"
        if self.stateless:
            await self._post_stateless(message, body, version, is_init, receive, send)
        elif is_init and "mcp-session-id" not in headers:
            session = await self._new_session()
            await self._deliver(session, message, body, receive, send, include_session=True)
        else:
            await self._deliver(self._session_of(headers), message, body, receive, send, version=version)

    async def _post_stateless(
        self, message: Any, body: bytes, version: str, is_init: bool, receive: Receive, send: Send
    ) -> None:
        session = SessionStream(None)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._run, session)
            if not is_init:
                await _handshake(session, version)
            await self._deliver(session, message, body, receive, send)
            session.close()

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes:
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            raise _HTTPError(413, f"Content Too Large: the limit is {self.max_body} bytes")
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.body_timeout) as timer:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Disconnected
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    raise _HTTPError(413, f"Content Too Large: the limit is {self.max_body} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if timer.cancelled_caught:
            raise _HTTPError(408, f"Request Timeout: body not received within {self.body_timeout} s")
        return b"".join(chunks)

    def _retry_for(self, version: str) -> int | None:
        return self.retry_ms if has(version, Feature.SSE_PRIMING) else None

    async def _deliver(
        self,
        session: SessionStream,
        message: Any,
        body: bytes,
        receive: Receive,
        send: Send,
        include_session: bool = False,
        version: str = V2025_03_26,
    ) -> None:
        session.last_seen = anyio.current_time()
        if not isinstance(message, Request):
            if isinstance(message, Notification) and message.method == "notifications/cancelled":
                cancelled = session.routes.get(message.params.get("requestId", ""))
                if cancelled is not None:  # no response will come, so its POST's stream ends here
                    cancelled.send.close()
            await session.push(body)
            await _respond(send, 202, b"", [])
            return
        if message.id in session.routes:
            raise _HTTPError(400, f"Bad Request: request id {message.id!r} is already in flight")
        sid = session.session_id
        extra = [(b"mcp-session-id", sid.encode())] if include_session and sid else []
        route = session.routes[message.id] = _Route(self._retry_for(version))
        session.active += 1
        try:
            await session.push(body)
            reply = self._reply_json if self.json_response else _reply_sse
            await reply(session, route, message.id, receive, send, extra)
        finally:
            if session.routes.get(message.id) is route:
                del session.routes[message.id]
            route.close()
            session.active -= 1
            session.last_seen = anyio.current_time()

    @staticmethod
    async def _reply_json(
        session: SessionStream, route: _Route, rid: RequestId, receive: Receive, send: Send, extra: list[Any]
    ) -> None:
        response = None
        async with _until_disconnect(receive) as gone:
            async for data in route.receive:
                if _is_response_to(data, rid):
                    response = data
                    break
                await session.send_standalone(data)  # JSON mode has no room for messages before the response
        if gone.is_set():
            return
        if response is None:
            error = {"code": INTERNAL_ERROR, "message": "The session ended before the response"}
            await _respond(send, 500, encode(error_message(rid, error)), _JSON_HEADERS + extra)
        else:
            await _respond(send, 200, response, _JSON_HEADERS + extra)

    async def _get(self, headers: dict[str, str], receive: Receive, send: Send) -> None:
        if not _accepts(headers, "text/event-stream"):
            raise _HTTPError(406, "Not Acceptable: Accept must include text/event-stream")
        version = _version(headers)
        session = self._session_of(headers)
        if session.standalone is not None:
            raise _HTTPError(409, "Conflict: this session already has a standalone stream")
        route = session.standalone = _Route(self._retry_for(version))
        while session.backlog:
            route.send.send_nowait(session.backlog.popleft())
        session.active += 1
        try:
            await _stream_events(session, route, receive, send, _SSE_HEADERS, None)
        finally:
            if session.standalone is route:
                session.standalone = None
            route.close()
            session.active -= 1
            session.last_seen = anyio.current_time()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _reply_sse(
    session: SessionStream, route: _Route, rid: RequestId, receive: Receive, send: Send, extra: list[Any]
) -> None:
    await _stream_events(session, route, receive, send, _SSE_HEADERS + extra, rid)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _stream_events(
    session: SessionStream,
    route: _Route,
    receive: Receive,
    send: Send,
    headers: list[Any],
    until: RequestId | None,
) -> None:
    """Start an SSE response and write each routed message as an event; stop after the response to `until`."""
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    priming = route.priming_event(session)
    if priming is not None:
        await send({"type": "http.response.body", "body": priming, "more_body": True})
    async with _until_disconnect(receive):
        async for data in route.receive:
            event = encode_event(data, event_id=session.next_event_id())
            await send({"type": "http.response.body", "body": event, "more_body": True})
            if until is not None and _is_response_to(data, until):
                break


async def _handshake(session: SessionStream, version: str) -> None:
    """Initialize a stateless request's fresh session on the client's behalf (no client capabilities)."""
    rid = f"mcpkit-stateless-{secrets.token_hex(8)}"
    client = {"name": "stateless", "version": "0"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    route = session.routes[rid] = _Route()
    try:
        await session.push(encode({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}))
        async for data in route.receive:
            if _is_response_to(data, rid):
                break
    finally:
        del session.routes[rid]
        route.close()
    await session.push(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))


@asynccontextmanager
async def _until_disconnect(receive: Receive) -> AsyncIterator[anyio.Event]:
    """Run the body until it finishes or the client goes away; the event says which."""
    gone = anyio.Event()

    async def watch(scope: anyio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch, tg.cancel_scope)
        yield gone
        tg.cancel_scope.cancel()


async def _respond(send: Send, status: int, body: bytes, headers: list[Any]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _response_id(data: bytes) -> RequestId | None:
    """The id `data` answers, if it is a response."""
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict) or "method" in message:
        return None
    if "result" not in message and "error" not in message:
        return None
    rid = message.get("id")
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def _is_response_to(data: bytes, rid: RequestId) -> bool:
    return _response_id(data) == rid


def _version(headers: dict[str, str]) -> str:
    """MCP-Protocol-Version: absent means 2025-03-26 (transports "Protocol Version Header")."""
    version = headers.get("mcp-protocol-version")
    if version is None:
        return V2025_03_26
    if version not in SUPPORTED_VERSIONS:
        raise _HTTPError(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
    return version


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _accepts(headers: dict[str, str], *types: str) -> bool:
    offered = {_media_type(part) for part in headers.get("accept", "").split(",")}
    return "*/*" in offered or all(t in offered for t in types)


def _allowed(value: str, allowed: tuple[str, ...]) -> bool:
    value = value.strip().lower()
    if not value:
        return False
    match = _PORT.fullmatch(value)
    bare = match.group(1) if match else value
    return "*" in allowed or value in allowed or bare in allowed


def serve_http(target: Any, *, host: str = "127.0.0.1", port: int = 8000, **app_options: Any) -> None:
    """Serve `target` over Streamable HTTP with uvicorn until interrupted.

    Binding beyond localhost needs `allowed_hosts` (and usually `allowed_origins`) to match.
    """
    import uvicorn

    uvicorn.run(StreamableHTTPApp(target, **app_options), host=host, port=port, lifespan="on")
