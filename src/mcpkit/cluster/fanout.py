"""What the bus brings a worker for the parts its Server was built with (`RedisBackplane.peers()` and
`.tasks()`): change notifications for the peers' subscriptions/listen streams, a task's cancel for the
engine running its leg. A part the Server was not built with hears nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.jsonrpc import JSON
from ..server.peers import Peers
from ..server.tasks.engine import TaskEngine
from .relay import ClusterRelay

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken

__all__ = ["Fanout"]


class Fanout:
    def __init__(self, relay: ClusterRelay) -> None:
        self.relay = relay
        self.peers: Peers | None = None  # set by the backplane's peers()
        self.engine: TaskEngine | None = None  # set by the backplane's tasks()

    def deliver(self, message: JSON) -> None:
        kind = message.get("k")
        if kind == "cancel-task" and self.engine is not None:
            self.engine.cancel_here(str(message.get("id")))
        elif kind == "changed" and self.peers is not None:
            self.peers.offer(str(message.get("m")))
        elif kind == "updated" and self.peers is not None:
            self.peers.offer("notifications/resources/updated", {"uri": message.get("uri")})

    def views(self, viewer: AccessToken | None) -> dict[str, str] | None:
        """What `viewer` sees of each list here, by list_changed method (`Audience.views`); None when
        the Server has no visibility hook (every session hears every list_changed)."""
        audience = self.peers.audience if self.peers is not None else None
        return audience.views(viewer) if audience is not None else None

    async def run(self) -> None:
        await self.relay.run()
