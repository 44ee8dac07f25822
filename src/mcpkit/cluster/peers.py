"""The Server's peers across a cluster (`RedisBackplane.peers()`): a session named by its id, since
several workers serve it, subscribes in Redis (counted against `max_subscriptions` there); change
notifications and logs go through the `ClusterRelay` to every worker's sessions and listeners."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..runtime.stream import StreamAttribute
from ..server.peers import Peers
from .relay import ClusterRelay

if TYPE_CHECKING:
    from ..runtime.session import Session

__all__ = ["SharedPeers"]


class SharedPeers(Peers):
    """`Peers` whose subscriptions and broadcasts are the cluster's. A session without an HTTP session id
    (not one the cluster shares) subscribes in this process, as with `Peers`."""

    def __init__(
        self, relay: ClusterRelay, *, max_subscriptions: int | None = 100, max_uri_length: int | None = 2048
    ) -> None:
        super().__init__(max_subscriptions=max_subscriptions, max_uri_length=max_uri_length)
        self.relay = relay

    async def subscribe(self, session: Session, uri: str) -> None:
        session_id = session.stream.extra(StreamAttribute.session_id, None)
        if session_id is None:
            await super().subscribe(session, uri)
            return
        self.check_uri(uri)
        if not await self.relay.subscribe(session_id, uri, self.max_subscriptions):
            raise self.too_many()

    async def unsubscribe(self, session: Session, uri: str) -> None:
        session_id = session.stream.extra(StreamAttribute.session_id, None)
        if session_id is None:
            await super().unsubscribe(session, uri)
        else:
            await self.relay.unsubscribe(session_id, uri)

    def changed(self, method: str) -> None:
        if not self.relay.changed(method):
            # told to nobody (items registered before the cluster runs, say): the audience's views
            # before the next change are the ones with it, or that change would seem to add them
            self._hearing(method, None)

    async def resource_updated(self, uri: str) -> None:
        await self.relay.resource_updated(uri)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        await self.relay.log(level, data, logger)
