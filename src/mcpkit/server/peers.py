"""Who is connected: the live sessions with their resource subscriptions, the subscriptions/listen
listeners, and the fan-out of change notifications and logs to them.

This is the one place a deployment of several processes replaces: built with a `Relay` that sees every
worker's peers (`mcpkit.cluster.RedisBackplane.peers()`), it hands subscriptions and fan-out to it;
handlers and the Registry never hold a session.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.errors import INVALID_PARAMS, MCPError
from ..runtime.stream import StreamAttribute

if TYPE_CHECKING:
    from ..runtime.session import Session
    from .subscriptions import Listener

__all__ = ["Peers", "Relay"]

JSON = dict[str, Any]


class Relay(Protocol):
    """Peers beyond this process: a session is named by its id, since several processes serve it."""

    async def subscribe(self, session_id: str, uri: str, limit: int | None) -> bool:
        """Record the subscription; False when the session already has `limit` others."""
        ...

    async def unsubscribe(self, session_id: str, uri: str) -> None: ...

    def changed(self, method: str) -> None: ...

    async def resource_updated(self, uri: str) -> None: ...

    async def log(self, level: str, data: Any, logger: str | None) -> None: ...


class Peers:
    """The sessions one server process serves, and what each of them asked to hear.

    `relay`: peers in other processes too (mcpkit.cluster): subscriptions and fan-out go through it, and
    it calls `offer` on every process for its own listeners. `max_subscriptions`: resources one session
    may subscribe to; `max_uri_length`: the longest URI it may subscribe to (characters). Past either,
    resources/subscribe is refused with -32602. None: no cap.
    """

    def __init__(
        self,
        *,
        relay: Relay | None = None,
        max_subscriptions: int | None = 100,
        max_uri_length: int | None = 2048,
    ) -> None:
        self.relay = relay
        self.max_subscriptions = max_subscriptions
        self.max_uri_length = max_uri_length
        self._subscribed: dict[Session, set[str]] = {}
        self.listeners: set[Listener] = set()

    def __len__(self) -> int:
        return len(self._subscribed)

    def share(self, relay: Relay) -> None:
        """From now on subscriptions and fan-out go through `relay`: a mounted child's go to its parent
        (mount.py). A cluster's peers are built with theirs."""
        self.relay = relay

    @contextmanager
    def connected(self, session: Session) -> Iterator[None]:
        """`session` hears broadcasts while the block runs; its subscriptions end with it."""
        self._subscribed[session] = set()
        try:
            yield
        finally:
            del self._subscribed[session]

    @contextmanager
    def listening(self, listener: Listener) -> Iterator[None]:
        """`listener` is offered every change notification while the block runs."""
        self.listeners.add(listener)
        try:
            yield
        finally:
            self.listeners.discard(listener)

    def check_uri(self, uri: str) -> None:
        """Refuse (-32602) a URI too long to subscribe to."""
        if self.max_uri_length is not None and len(uri) > self.max_uri_length:
            message = f"Invalid params: a subscribed uri has at most {self.max_uri_length} characters"
            raise MCPError(INVALID_PARAMS, message)

    async def subscribe(self, session: Session, uri: str) -> None:
        """resources/subscribe: `session` hears notifications/resources/updated for `uri`; refused
        (-32602) past `max_uri_length` or `max_subscriptions`."""
        self.check_uri(uri)
        limit, shared = self.max_subscriptions, self._shared_id(session)
        if shared is not None:
            accepted = await shared[0].subscribe(shared[1], uri, limit)
        else:
            uris = self._subscribed[session]
            accepted = uri in uris or limit is None or len(uris) < limit
            if accepted:
                uris.add(uri)
        if not accepted:
            message = f"Invalid params: a session subscribes to at most {limit} resources"
            raise MCPError(INVALID_PARAMS, message)

    async def unsubscribe(self, session: Session, uri: str) -> None:
        shared = self._shared_id(session)
        if shared is not None:
            await shared[0].unsubscribe(shared[1], uri)
        else:
            self._subscribed[session].discard(uri)

    def subscriptions(self, session: Session) -> frozenset[str]:
        """What `session` subscribed to in this process (a shared session's live in the relay)."""
        return frozenset(self._subscribed.get(session, ()))

    def _shared_id(self, session: Session) -> tuple[Relay, str] | None:
        if self.relay is None:
            return None
        session_id = session.stream.extra(StreamAttribute.session_id, None)
        return (self.relay, session_id) if session_id is not None else None

    def changed(self, method: str) -> None:
        """A list_changed notification to every session and listener; never waits on a peer."""
        if self.relay is not None:
            self.relay.changed(method)
            return
        for session in self._subscribed:
            session.notify_soon(method, None)
        self.offer(method)

    def offer(self, method: str, params: JSON | None = None) -> None:
        """A change notification to this process's subscriptions/listen streams."""
        for listener in self.listeners:
            listener.offer(method, params)

    async def resource_updated(self, uri: str) -> None:
        """notifications/resources/updated to every session subscribed to `uri`, and to listeners."""
        if self.relay is not None:
            await self.relay.resource_updated(uri)
            return
        for session, uris in list(self._subscribed.items()):
            if uri in uris:
                await session.notify("notifications/resources/updated", {"uri": uri})
        self.offer("notifications/resources/updated", {"uri": uri})

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """A log message to every initialized session whose level lets it through."""
        if self.relay is not None:
            await self.relay.log(level, data, logger)
            return
        for session in list(self._subscribed):
            if session.ready.is_set():
                await session.send_message(session.connection.log(level, data, logger))
