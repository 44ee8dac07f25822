"""What the bus brings a worker for the parts its Server was built with (`RedisBackplane.peers()` and
`.tasks()`): change notifications for the peers' subscriptions/listen streams, a task's cancel for the
engine running its leg. A part the Server was not built with hears nothing."""

from __future__ import annotations

from ..protocol.jsonrpc import JSON
from ..server.peers import Peers
from ..server.tasks.engine import TaskEngine
from .relay import ClusterRelay

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

    async def run(self) -> None:
        await self.relay.run()
