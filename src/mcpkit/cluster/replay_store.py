"""DPoP replay checks shared by every worker of a cluster (RFC 9449 §11.1): a proof one worker accepted is
refused by all of them. A ReplayStore (mcpkit.auth.replay) for `DPoPChecker(replays=...)`."""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from ..protocol.dpop_proof import ReplayCheckUnavailable

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

__all__ = ["RedisReplayStore"]

# KEYS: the set; ARGV: member, until_ms, now_ms, max_entries -> {1, 0} first use, {0, 0} a replay,
# {-1, the earliest until_ms} full. An entry lives while now <= until (its proof's iat is still in the
# window), so only those with until < now go.
FIRST_USE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {0, 0} end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {-1, tonumber(first[2])}
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local live = tonumber(ARGV[2]) - tonumber(ARGV[3]) + 1
if redis.call('PTTL', KEYS[1]) < live then redis.call('PEXPIRE', KEYS[1], live) end
return {1, 0}
"""


class RedisReplayStore:
    """The accepted proofs of every worker in one Redis sorted set, `{prefix}dpop-jti`, scored by when
    each expires; at most `max_entries` across the cluster.

    Not one `SET NX PX` key per proof: those give no count to refuse at when full. The check, the expiry
    and the count are one script, so two workers given the same proof at once accept it once. A member
    is the SHA-256 of the key and the `jti` (32 bytes, however long the `jti`). Expiry follows the
    workers' clocks: keep them within `leeway` of each other.
    """

    def __init__(self, redis: Redis | RedisCluster, prefix: str = "mcp:", max_entries: int = 100_000) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.key = f"{prefix}dpop-jti"
        self.max_entries = max_entries
        self._first_use = redis.register_script(FIRST_USE)

    async def first_use(self, key: str, jti: str, until: float, now: float) -> bool:
        member = hashlib.sha256(f"{len(key)}:{key}{jti}".encode()).digest()
        now_ms = math.floor(now * 1000)
        args: list[bytes | int] = [member, math.ceil(until * 1000), now_ms, self.max_entries]
        try:
            status, earliest = await self._first_use(keys=[self.key], args=args)
        except RedisError as exc:
            raise ReplayCheckUnavailable("the DPoP replay store (Redis) is unreachable", 1) from exc
        if status == -1:
            raise ReplayCheckUnavailable("the DPoP replay store is full", (int(earliest) - now_ms) / 1000)
        return bool(status == 1)
