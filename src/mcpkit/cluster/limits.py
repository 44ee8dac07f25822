"""Rate limits and concurrency caps held across every worker of a cluster: a LimitStore
(mcpkit.server.middleware.limit_store) in Redis, for `RateLimit(store=...)` and `ConcurrencyLimit(store=...)`.

Each step is one Lua script, so two workers taking the last token at once cannot both get it, and each
reads the clock of Redis (`TIME`), not the workers', so the rate holds however their clocks drift.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from ..protocol.errors import SERVER_BUSY, STORE_UNAVAILABLE, MCPError
from .pool import PoolExhausted

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

__all__ = ["RedisLimits"]

_NOW_MS = (
    "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
)

# KEYS: the bucket (a hash: n = tokens, t = when, in ms); ARGV: tokens per ms, burst -> 0 when a token
# was taken, else the ms until one is there. A bucket left alone until full again is dropped (a missing
# bucket is a full one), so idle callers cost nothing.
TAKE = (
    _NOW_MS
    + """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'n', 't')
local tokens, last = tonumber(b[1]) or burst, tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - last) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) / rate) end
redis.call('HSET', KEYS[1], 'n', tostring(tokens), 't', now)
redis.call('PEXPIRE', KEYS[1], math.min(math.ceil((burst - tokens) / rate) + 1000, 1e12))
return wait
"""
)

# KEYS: the slots (a sorted set: ticket -> lease end, in ms); ARGV: cap, ticket, lease ms -> 1 held, 0 full.
# Leases past their end are dropped first: a worker that died holding slots gives them back that way.
ENTER = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
"""
)


class RedisLimits:
    """Token buckets (`{prefix}rl:<hash>`) and slots (`{prefix}cc:<hash>`) in Redis, by the SHA-256 of
    each limit's key. A slot is leased for `lease` seconds: held longer (a call that outlives it) it no
    longer counts, and a worker that dies holding it gives it back when it ends.

    Redis out of reach refuses the request as the store being unavailable (-32011; over 2026-07-28
    HTTP, 503 with Retry-After), and this worker out of Redis connections as busy (-32010): a limit
    that cannot be counted is not waved through.
    """

    def __init__(self, redis: Redis | RedisCluster, prefix: str = "mcp:", lease: float = 600.0) -> None:
        if lease <= 0:
            raise ValueError("lease must be positive")
        self.prefix, self.lease_ms = prefix, int(lease * 1000)
        self._redis = redis
        self._take = redis.register_script(TAKE)
        self._enter = redis.register_script(ENTER)

    def _key(self, kind: str, key: str) -> str:
        return f"{self.prefix}{kind}:{hashlib.sha256(key.encode()).hexdigest()[:32]}"

    async def take(self, key: str, per_second: float, burst: int) -> float:
        try:
            wait_ms = await self._take(keys=[self._key("rl", key)], args=[repr(per_second / 1000), burst])
        except RedisError as exc:
            raise _unavailable(exc) from None
        return int(wait_ms) / 1000

    async def enter(self, key: str, cap: int) -> str | None:
        ticket = secrets.token_hex(8)
        try:
            held = await self._enter(keys=[self._key("cc", key)], args=[cap, ticket, self.lease_ms])
        except RedisError as exc:
            raise _unavailable(exc) from None
        return ticket if held == 1 else None

    async def leave(self, key: str, ticket: str) -> None:
        with contextlib.suppress(RedisError):  # the lease ends it
            await self._redis.zrem(self._key("cc", key), ticket)


def _unavailable(exc: RedisError) -> MCPError:
    if isinstance(exc, PoolExhausted):
        return MCPError(SERVER_BUSY, f"Server busy: {exc}; retry shortly", {"retryAfterMs": 1000})
    return MCPError(STORE_UNAVAILABLE, "The limits store (Redis) is unreachable", {"retryAfterMs": 1000})
