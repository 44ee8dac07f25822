"""Who is connected: the live sessions with their resource subscriptions, the subscriptions/listen
listeners, and the fan-out of change notifications and logs to them.

This is the one place a deployment of several processes replaces (a shared store that sees every
worker's peers, design/scaleout-and-tasks.md); handlers and the Registry never hold a session.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runtime.session import Session
    from .subscriptions import Listener

__all__ = ["Peers"]


class Peers:
    """The sessions one server process serves, and what each of them asked to hear."""

    def __init__(self) -> None:
        self._subscribed: dict[Session, set[str]] = {}
        self.listeners: set[Listener] = set()

    def __len__(self) -> int:
        return len(self._subscribed)

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

    async def subscribe(self, session: Session, uri: str) -> None:
        """resources/subscribe: `session` hears notifications/resources/updated for `uri`."""
        self._subscribed[session].add(uri)

    async def unsubscribe(self, session: Session, uri: str) -> None:
        self._subscribed[session].discard(uri)

    def subscriptions(self, session: Session) -> frozenset[str]:
        return frozenset(self._subscribed.get(session, ()))

    def changed(self, method: str) -> None:
        """A list_changed notification to every session and listener; never waits on a peer."""
        for session in self._subscribed:
            session.notify_soon(method, None)
        for listener in self.listeners:
            listener.offer(method)

    async def resource_updated(self, uri: str) -> None:
        """notifications/resources/updated to every session subscribed to `uri`, and to listeners."""
        for session, uris in list(self._subscribed.items()):
            if uri in uris:
                await session.notify("notifications/resources/updated", {"uri": uri})
        for listener in self.listeners:
            listener.offer("notifications/resources/updated", {"uri": uri})

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """A log message to every initialized session whose level lets it through."""
        for session in list(self._subscribed):
            if session.ready.is_set():
                await session.send_message(session.connection.log(level, data, logger))
