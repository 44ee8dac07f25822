"""The cluster's count of live sessions, `{g}:sessions`: each session scored by when it expires.

It bounds `max_sessions` (a new session is admitted against it in one script, `scripts.ADMIT`) and
lists the sessions the event budget measures. Requests do not write it: on a Redis Cluster it is a key
of one shard, and a request's script may only touch its session's slot. Each worker notes the
sessions it served and moves their scores forward once per `interval` in one `ZADD XX GT`, so a score
lags its session's last activity by at most that (plus an outage): a session's record outlives its
score by no more, and the count is exact but for sessions that expired in the last interval.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

__all__ = ["SessionIndex"]

log = logging.getLogger("mcpkit.cluster")


class SessionIndex:
    def __init__(self, redis: Redis | RedisCluster, key: str, idle_ms: int, interval: float = 1.0) -> None:
        self.redis = redis
        self.key = key
        self.idle_ms = idle_ms
        self.interval = interval
        self.touched: dict[str, int] = {}  # session -> when it expires now, not yet written

    def touch(self, session_id: str, now_ms: int) -> None:
        self.touched[session_id] = now_ms + self.idle_ms

    def forget(self, session_id: str) -> None:
        self.touched.pop(session_id, None)

    async def flush(self) -> None:
        """The scores noted since the last flush, written (kept for the next one when Redis fails)."""
        batch, self.touched = self.touched, {}
        if not batch:
            return
        try:
            await self.redis.zadd(self.key, batch, xx=True, gt=True)
        except RedisError:
            for session_id, score in batch.items():
                self.touched[session_id] = max(score, self.touched.get(session_id, 0))
            raise

    async def run_once(self) -> None:
        try:
            await self.flush()
        except RedisError as exc:  # Redis away: requests report it
            log.debug("session index flush failed: %s", exc)
