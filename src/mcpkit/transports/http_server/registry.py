"""The live sessions of a Streamable HTTP server: created on initialize, each one `serve` task, ended by
DELETE, by idling past the timeout, or by shutdown; at most `max_sessions` at once, and at most
`per_client.limit` of them held by one client the server can identify (`clients`). A session's stored
events are forgotten when it ends, so abandoned sessions leave nothing behind."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from time import monotonic
from typing import Any

import anyio

from ...protocol.errors import INTERNAL_ERROR
from ...protocol.http_rules import SESSION_NOT_FOUND, HTTPRefusal, request_version
from ...protocol.jsonrpc import encode, error_response
from .asgi import Receive, Send
from .clients import ClientCounts
from .event_store import EventStore
from .hosting import TaskHost
from .sessions import Item, SessionStream

__all__ = ["SessionRegistry"]

log = logging.getLogger("mcpkit.transports.http_server")

_SHUTDOWN = "Internal error: the server shut down before this request finished"
_NO_SESSION = (
    "carries no Mcp-Session-Id header: this server keeps sessions, so send initialize first and name the "
    "session it returns (a 2026-07-28 request carries its version in _meta and needs no session)"
)


class SessionRegistry:
    def __init__(
        self,
        serve: Callable[[SessionStream], Awaitable[None]],
        store: EventStore,
        *,
        max_sessions: int,
        idle_timeout: float,
        max_sessions_per_client: int = 100,
        background: Callable[[], Awaitable[None]] | None = None,
        hold: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
        check: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._serve = serve
        self._background = background
        self.per_client = ClientCounts("sessions", max_sessions_per_client)
        self.store = store
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.sessions: dict[str, SessionStream] = {}
        self.alone: set[SessionStream] = set()  # requests served without a session (2026-07-28, sessionless)
        self._ending: set[str] = set()  # ended, their stored events not yet forgotten: still counted
        self._host = TaskHost(self._keep, self.end_all, hold, check)

    async def lifespan(self, receive: Receive, send: Send) -> None:
        await self._host.lifespan(receive, send)

    async def hosted(self) -> None:
        """Once the session tasks' host runs (started by the first request without lifespan)."""
        await self._host.task_group()

    async def aclose(self) -> None:
        """End every session, and the task group hosted without lifespan (if one was started)."""
        self.end_all()
        await self._host.aclose()

    async def new(self, client: str | None = None, principal: str | None = None) -> SessionStream:
        """A new session with its `serve` task running, held by `client` (None: unidentified) and
        bound to `principal` (the access token's, on a protected server); 503 at `max_sessions`,
        429 when `client` already holds its share."""
        if len(self.sessions) + len(self._ending) >= self.max_sessions:
            raise HTTPRefusal(503, "Service Unavailable: too many sessions", INTERNAL_ERROR, retry_after="5")
        tg = await self._host.task_group()
        self.per_client.acquire(client)  # released when the session's `run` ends
        session = SessionStream(secrets.token_urlsafe(32), self.store)
        session.client, session.principal = client, principal
        assert session.session_id is not None
        self.sessions[session.session_id] = session
        tg.start_soon(self.run, session)
        return session

    def find(
        self, headers: dict[str, str], what: str, strict_version: bool, principal: str | None = None
    ) -> tuple[SessionStream, str]:
        """The session a request names, and the version it speaks (checked against the session's):
        400 when it names none, 404 when that session is gone or bound to another principal (the
        same answer, so a session id learnt by someone else reveals nothing)."""
        sid = headers.get("mcp-session-id")
        if sid is None:
            raise HTTPRefusal(400, f"Bad Request: {what} {_NO_SESSION}")
        session = self.sessions.get(sid)
        if session is None or session.principal != principal:
            raise HTTPRefusal(404, "Session not found", SESSION_NOT_FOUND)
        return session, request_version(headers.get("mcp-protocol-version"), session.version, strict_version)

    def end(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self._ending.add(session_id)
            session.close()

    def end_all(self) -> None:
        for sid in list(self.sessions):
            self.end(sid)

    async def end_alone(self) -> None:
        """Past a drain's deadline: each request served without a session is answered -32603
        (`server_shutdown`), and its handler stops."""
        for session in list(self.alone):
            for rid, route in list(session.routes.items()):
                error = error_response(rid, INTERNAL_ERROR, _SHUTDOWN, {"reason": "server_shutdown"})
                await route.offer(Item(None, encode(error), True, INTERNAL_ERROR))
                session.close_route(rid, route)
            session.close()

    async def run(self, session: SessionStream) -> None:
        """Serve one session (also a stateless one, inside its request) and clean up after it."""
        if session.session_id is None:
            self.alone.add(session)
        try:
            await self._serve(session)
        except Exception:
            log.exception("MCP session %s failed", session.session_id)
        finally:
            self.alone.discard(session)
            session.close()
            self.per_client.release(session.client)
            sid = session.session_id
            if sid is not None:
                if self.sessions.get(sid) is session:
                    del self.sessions[sid]
                    self._ending.add(sid)
                try:
                    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                        await self.store.forget(sid)
                finally:
                    self._ending.discard(sid)

    async def _keep(self) -> None:
        if self._background is None:
            await self._reap()
            return
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._reap)
            await self._background()

    async def _reap(self) -> None:
        period = max(0.01, min(self.idle_timeout / 4, 30.0))
        while True:
            await anyio.sleep(period)
            deadline = monotonic() - self.idle_timeout
            for sid, session in list(self.sessions.items()):
                if session.active == 0 and session.last_seen < deadline:
                    self.end(sid)
