"""What the parts of one worker's share of the cluster use together: the shared state, the signals,
this worker's name, request ids and open requests. The session host (`ClusterSessions`) makes one and
hands it to the replicas and tails it starts, so none of them holds the host itself."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..protocol.jsonrpc import RequestId
from ..transports.http_server.delivery import Answering
from ..transports.http_server.sessions import SessionStream
from .signals import Signals
from .state import SharedState
from .store_health import StoreHealth

__all__ = ["ThisWorker"]

S = TypeVar("S", bound=SessionStream)


@dataclass(eq=False)
class ThisWorker(Generic[S]):
    """`awaiting`: our requests to clients, by (session, request id), with the stream (a replica) that
    asked. `serving`: the replicas serving a request now, by (session, request id as JSON)."""

    state: SharedState
    name: str
    signals: Signals
    health: StoreHealth
    request_ids: Iterator[RequestId]
    answering: Answering
    dead_after: float
    awaiting: dict[tuple[str, RequestId], S] = field(default_factory=dict)
    serving: dict[tuple[str, str], S] = field(default_factory=dict)

    async def alive(self, worker: str) -> bool:
        """Whether `worker` still beats (this one always does)."""
        return worker == self.name or await self.state.beating(worker)
