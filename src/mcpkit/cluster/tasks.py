"""The workers of a cluster as a TaskEngine needs them (`TaskCluster`, server/tasks/workers.py): who this
worker is, whether another one is alive, how to reach the one running a leg, and a session for a
2025-11-25 leg that outlives the request which created its task.

That request's replica ends once CreateTaskResult is stored; the leg goes on talking to the client
through a replica of its own, related to no request, whose messages go to the session's standalone
stream (2025-11-25 tasks "Input Required Status": clients "SHOULD expect messages to be delivered on
any SSE stream, including the HTTP GET stream"), and whose requests' answers, POSTed to any worker,
are routed back to it like any replica's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import orjson

from ..protocol import events as ev
from ..protocol.capabilities import Role
from ..protocol.connection import Connection
from ..protocol.errors import MethodNotFound
from ..protocol.jsonrpc import JSON
from ..runtime.session import Session
from ..runtime.stream import Restored
from .replica import Replica

if TYPE_CHECKING:
    from .state import SharedState

__all__ = ["ClusterTasks"]


class ClusterTasks:
    """`worker` among the workers sharing `state`."""

    def __init__(self, state: SharedState, worker: str) -> None:
        self.state = state
        self._worker = worker

    @property
    def worker(self) -> str | None:
        return self._worker

    async def alive(self, worker: str) -> bool:
        return worker == self._worker or await self.state.beating(worker)

    async def cancel_elsewhere(self, task_id: str) -> None:
        message = orjson.dumps({"k": "cancel-task", "id": task_id})
        await self.state.redis.spublish(self.state.bus, message)

    @asynccontextmanager
    async def outliving(self, session: Session) -> AsyncIterator[Session]:
        """A session to the same client as `session` (a request's, on this worker) that lasts until
        the block ends."""
        replica, agreed = session.stream, session.connection.negotiated
        if not isinstance(replica, Replica) or replica.session_id is None or agreed is None:
            yield session  # not a cluster session's request: it lives as long as the session does
            return
        log_level = session.connection.log_level
        restored = Restored(agreed.version, agreed.client_capabilities, agreed.client_info, log_level)
        own = Replica(replica.session_id, replica.here, restored, "")
        connection = Connection(
            Role.SERVER,
            info=agreed.server_info,
            capabilities=agreed.server_capabilities,
            request_ids=own.request_ids,
        )
        outliving = Session(connection, own, _no_requests)
        # among the replicas this worker serves, so it is closed with them when the session ends
        # (DELETE, on any worker) or the worker stops: a leg's pending ask then fails at once
        key = (replica.session_id, f"leg:{id(own)}")  # never a request id as JSON
        replica.here.serving[key] = own
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(outliving.run)
                try:
                    yield outliving
                finally:
                    own.close()
        finally:
            replica.here.serving.pop(key, None)
            awaiting = replica.here.awaiting
            for rid in [rid for rid, held in awaiting.items() if held is own]:  # asked, never answered
                del awaiting[rid]


async def _no_requests(session: Session, request: ev.RequestReceived) -> JSON:
    """Only answers reach a leg's session: requests go to the replica of their own POST."""
    raise MethodNotFound(f"Method not found: {request.method}")
