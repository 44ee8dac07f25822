"""Sessions kept in this process: the `SessionHost` of an app without a backplane.

Each session is a `SessionStream` in the registry, served by its own `serve` task; its events are kept in
the app's EventStore, so a GET with Last-Event-ID resumes a stream of this process.
"""

from __future__ import annotations

from ...protocol.jsonrpc import Notification, Request
from .asgi import respond
from .delivery import Answering, deliver
from .event_store import EventStore
from .exchange import Exchange
from .registry import SessionRegistry
from .streams import resume, stream_standalone

__all__ = ["LocalSessions"]


class LocalSessions:
    def __init__(
        self,
        registry: SessionRegistry,
        event_store: EventStore,
        answering: Answering,
        *,
        strict_version: bool,
    ) -> None:
        self.registry = registry
        self.event_store = event_store
        self.answering = answering
        self.strict_version = strict_version

    async def new(self, exchange: Exchange) -> None:
        session = await self.registry.new(exchange.client, exchange.principal)
        exchange.response_headers.append((b"mcp-session-id", (session.session_id or "").encode()))
        await deliver(session, exchange, self.answering)

    async def post(self, exchange: Exchange) -> None:
        message = exchange.message
        what = f"{message.method!r}" if isinstance(message, Request | Notification) else "a response"
        session, exchange.version = self.registry.find(
            exchange.headers, what, self.strict_version, exchange.principal
        )
        await deliver(session, exchange, self.answering)

    async def get(self, exchange: Exchange) -> None:
        session, version = self.registry.find(
            exchange.headers, "GET", self.strict_version, exchange.principal
        )
        last_event_id = exchange.headers.get("last-event-id")
        with session.busy():
            if last_event_id is not None:
                await resume(session, self.event_store, last_event_id, exchange)
            else:
                await stream_standalone(session, self.answering.retry_for(version), exchange)

    async def delete(self, exchange: Exchange) -> None:
        session, _ = self.registry.find(exchange.headers, "DELETE", self.strict_version, exchange.principal)
        self.registry.end(session.session_id or "")
        await respond(exchange.send, 204, b"", [])

    async def run(self) -> None:
        """Nothing runs beside this process's sessions."""

    async def end_all(self) -> None:
        """The sessions end: a request still waiting is answered 404, as its next request would be."""
        self.registry.end_all()

    async def aclose(self) -> None:
        """The registry ends the sessions."""
