"""Sessions this worker served last, kept running between their requests.

Restoring a session for every POST (a Session, its Connection, its task) cost a worker more than the
Redis round trips of the request (benchmarks/README.md, "The CPU one call costs"). A replica whose
request is done goes back here instead of closing; the session's next request on this worker takes it
if what the shared record says of the session (`Restored`: the agreed version, the client's
declaration, its log level) is still what the replica was built from. When another worker changed the
session (a logging/setLevel there), the record differs and the replica is rebuilt; nothing else a
replica holds outlives its request. A replica that is in use, failed, was cancelled or is past
`capacity` (the least recently used go first) or `max_idle` seconds is closed.
"""

from __future__ import annotations

from collections import OrderedDict
from time import monotonic

from ..runtime.stream import Restored
from .replica import Replica

__all__ = ["WarmReplicas"]


class WarmReplicas:
    def __init__(self, capacity: int, max_idle: float) -> None:
        if capacity < 0 or max_idle <= 0:
            raise ValueError("warm_sessions must be 0 or more and its idle time positive")
        self.capacity = capacity
        self.max_idle = max_idle
        self._idle: OrderedDict[str, tuple[Replica, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._idle)

    def take(self, session_id: str, restored: Restored) -> Replica | None:
        """The session's idle replica, if it was built from `restored` (else it is closed)."""
        entry = self._idle.pop(session_id, None)
        if entry is None:
            return None
        replica = entry[0]
        if replica.closed or replica.restored != restored:
            replica.close()
            return None
        return replica

    def keep(self, replica: Replica) -> None:
        """`replica`'s request is done: kept for the session's next one, or closed."""
        session_id = replica.session_id
        if (
            self.capacity == 0
            or session_id is None
            or replica.restored is None  # an initialize's: its next request restores the agreement
            or replica.closed
            or not replica.reusable
            or replica.routes
            or session_id in self._idle  # another request's replica came back first
        ):
            replica.close()
            return
        self._idle[session_id] = (replica, monotonic())
        while len(self._idle) > self.capacity:
            self._idle.popitem(last=False)[1][0].close()

    def forget(self, session_id: str) -> None:
        """The session ended."""
        entry = self._idle.pop(session_id, None)
        if entry is not None:
            entry[0].close()

    def sweep(self) -> None:
        """Close the replicas idle for longer than `max_idle`."""
        deadline = monotonic() - self.max_idle
        while self._idle:
            session_id, (replica, since) = next(iter(self._idle.items()))
            if since > deadline:
                return
            del self._idle[session_id]
            replica.close()

    def close_all(self) -> None:
        while self._idle:
            self._idle.popitem()[1][0].close()
