"""Answers a failover may have lost, stored again. Redis replicates asynchronously: a replica promoted
after its primary was lost lacks what the primary took in its last moments, among it the response of a
request this worker finished (the record says the request is still in flight, and a client resuming its
stream would wait for a response nobody sends any more). Each worker keeps the final events it stored in
the last `window` seconds (at most `max_bytes` of them) and, once a second, asks Redis who it is (the
servers' run ids): when another server answers than before (a failover, or a restart that kept nothing),
it stores them again. A final event that is still there is not stored twice (the script refuses a second
one); a session the failover lost stays lost (its client gets 404 and starts a new one). The task store
does the same with the tasks this worker ended (`also`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

if TYPE_CHECKING:
    from redis.asyncio import Redis

# how a final event is stored again: (session, stream, data) -> its seq (<= 0: not stored)
StoreFinal = Callable[[str, str, bytes], Awaitable[int]]
# another part's recent writes stored again: how many were missing
StoreAgain = Callable[[], Awaitable[int]]

__all__ = ["FailoverWatch"]

log = logging.getLogger("mcpkit.cluster")


class FailoverWatch:
    def __init__(
        self,
        redis: Redis | RedisCluster,
        store_final: StoreFinal,
        window: float = 60.0,
        max_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self.redis = redis
        self.store_final = store_final
        self.window = window
        self.max_bytes = max_bytes
        self.recent: deque[tuple[float, str, str, bytes]] = deque()  # (when, session, stream, data)
        self.size = 0
        self.servers: frozenset[str] | None = None  # the run ids that answered last
        self.changed_at: float | None = None  # when other servers than before answered (monotonic)
        self.also: list[StoreAgain] = []  # what else stores its recent writes again (the task store)

    def stored(self, session_id: str, stream_id: str, data: bytes) -> None:
        """A stream's final event was stored: kept for `window` seconds."""
        self.recent.append((time.monotonic(), session_id, stream_id, data))
        self.size += len(data)
        self._trim()

    def _trim(self) -> None:
        horizon = time.monotonic() - self.window
        while self.recent and (self.recent[0][0] < horizon or self.size > self.max_bytes):
            self.size -= len(self.recent.popleft()[3])

    async def check(self) -> None:
        """One look at who answers; the recent final events stored again if that changed."""
        redis = self.redis
        if isinstance(redis, RedisCluster):  # each primary's, not one node's
            servers = _run_ids(await redis.info("server", target_nodes=RedisCluster.PRIMARIES))
        else:
            servers = _run_ids(await redis.info("server"))
        before, self.servers = self.servers, servers
        if before is None or servers <= before:
            return
        self.changed_at = time.monotonic()
        self._trim()
        again = 0
        for _, session_id, stream_id, data in list(self.recent):
            if await self.store_final(session_id, stream_id, data) > 0:
                again += 1
        ends = [await store_again() for store_again in self.also]
        what = "%d lost responses and %d task ends stored again"
        log.warning("the session store changed servers (a failover?): " + what, again, sum(ends))

    def changed_within(self, seconds: float) -> bool:
        """Whether the store changed servers in the last `seconds` (as far as the last check saw)."""
        return self.changed_at is not None and time.monotonic() - self.changed_at < seconds

    async def run_once(self) -> None:
        try:
            await self.check()
        except RedisError as exc:  # Redis away: requests report it
            log.debug("failover check failed: %s", exc)


def _run_ids(info: Any) -> frozenset[str]:
    """The run ids in an INFO server reply: one server's, or each node's of a cluster."""
    if isinstance(info, dict) and "run_id" in info:
        return frozenset([str(info["run_id"])])
    if isinstance(info, dict):
        return frozenset(
            str(node["run_id"]) for node in info.values() if isinstance(node, dict) and "run_id" in node
        )
    return frozenset()
