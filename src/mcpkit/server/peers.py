"""Who is connected: the live sessions with their resource subscriptions, the subscriptions/listen
listeners, and the fan-out of change notifications and logs to them.

This is the one place a deployment of several processes replaces: `Peers` serves one process; a
subclass that sees every worker's peers (`mcpkit.cluster.RedisBackplane.peers()`) is passed to the
Server instead, and a mounted server's peers hand their broadcasts to the parent (`MountedPeers`).
Handlers and the Registry never hold a session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.errors import InvalidParams, MCPError
from ..protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken
    from ..runtime.session import Session
    from .subscriptions import Listener

__all__ = ["Audience", "Peers"]


class Audience(Protocol):
    """Who may hear a notification (a Server's visibility hook: server/visibility.py)."""

    def hearing(self, method: str, params: JSON | None) -> Callable[[object], bool]:
        """`hears(member)` for one notification, a member being a Session or a Listener."""
        ...

    def views(self, viewer: AccessToken | None) -> dict[str, str]:
        """What `viewer` sees of each list now, as a digest by the list_changed method announcing it:
        equal on every process whose registry holds the same items (a cluster compares them)."""
        ...


def _everyone(_member: object) -> bool:
    return True


class Peers:
    """The sessions one server process serves, and what each of them asked to hear.

    `max_subscriptions`: resources one session may subscribe to; `max_uri_length`: the longest URI it
    may subscribe to (characters). Past either, resources/subscribe is refused with -32602. None: no cap.
    `audience`: who hears which notification about items (None: every session and listener).
    """

    def __init__(self, *, max_subscriptions: int | None = 100, max_uri_length: int | None = 2048) -> None:
        self.max_subscriptions = max_subscriptions
        self.max_uri_length = max_uri_length
        self._subscribed: dict[Session, set[str]] = {}
        self.listeners: set[Listener] = set()
        self.audience: Audience | None = None

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

    def check_uri(self, uri: str) -> None:
        """Refuse (-32602) a URI too long to subscribe to."""
        if self.max_uri_length is not None and len(uri) > self.max_uri_length:
            message = f"Invalid params: a subscribed uri has at most {self.max_uri_length} characters"
            raise InvalidParams(message)

    async def subscribe(self, session: Session, uri: str) -> None:
        """resources/subscribe: `session` hears notifications/resources/updated for `uri`; refused
        (-32602) past `max_uri_length` or `max_subscriptions`."""
        self.check_uri(uri)
        limit, uris = self.max_subscriptions, self._subscribed[session]
        if not (uri in uris or limit is None or len(uris) < limit):
            raise self.too_many()
        uris.add(uri)

    def too_many(self) -> MCPError:
        return InvalidParams(
            f"Invalid params: a session subscribes to at most {self.max_subscriptions} resources",
        )

    async def unsubscribe(self, session: Session, uri: str) -> None:
        self._subscribed[session].discard(uri)

    def subscriptions(self, session: Session) -> frozenset[str]:
        """What `session` subscribed to in this process."""
        return frozenset(self._subscribed.get(session, ()))

    def changed(self, method: str) -> None:
        """A list_changed notification to every session and listener of the audience; never waits on
        a peer."""
        hears = self._hearing(method, None)
        for session in self._subscribed:
            if hears(session):
                session.notify_soon(method, None)
        self._offer(method, None, hears)

    def offer(self, method: str, params: JSON | None = None) -> None:
        """A change notification to this process's subscriptions/listen streams (of the audience)."""
        self._offer(method, params, self._hearing(method, params))

    def _offer(self, method: str, params: JSON | None, hears: Callable[[object], bool]) -> None:
        for listener in self.listeners:
            if hears(listener):
                listener.offer(method, params)

    def _hearing(self, method: str, params: JSON | None) -> Callable[[object], bool]:
        return _everyone if self.audience is None else self.audience.hearing(method, params)

    async def resource_updated(self, uri: str) -> None:
        """notifications/resources/updated to every session subscribed to `uri`, and to listeners (of
        the audience)."""
        method, params = "notifications/resources/updated", {"uri": uri}
        hears = self._hearing(method, params)
        for session, uris in list(self._subscribed.items()):
            if uri in uris and hears(session):
                await session.notify(method, params)
        self._offer(method, params, hears)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """A log message to every initialized session whose level lets it through."""
        for session in list(self._subscribed):
            if session.ready.is_set():
                await session.send_message(session.connection.log(level, data, logger))
