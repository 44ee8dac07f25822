"""The login proxy's store shared by every worker of a cluster: a login started on one worker can end on
another, and a token issued by one is accepted (and revoked) by all. An IdentityStore
(mcpkit.auth.identity) for `AuthorizationServer(store=...)`; give every worker the same `secret_key`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisIdentityStore"]


class RedisIdentityStore:
    """Values under `{prefix}{key}`, each with its time to live in Redis; `take` is one GETDEL, so a
    code or refresh token raced to two workers is spent once (Redis 6.2 or later)."""

    def __init__(self, redis: Redis, prefix: str = "mcp:identity:") -> None:
        self.redis = redis
        self.prefix = prefix

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        await self.redis.set(self.prefix + key, value, px=max(1, math.ceil(ttl * 1000)))

    async def get(self, key: str) -> bytes | None:
        return _raw(await self.redis.get(self.prefix + key))

    async def take(self, key: str) -> bytes | None:
        return _raw(await self.redis.getdel(self.prefix + key))

    async def delete(self, key: str) -> None:
        await self.redis.delete(self.prefix + key)


def _raw(found: bytes | str | None) -> bytes | None:
    """Bytes whether or not the client was made with decode_responses."""
    return found.encode() if isinstance(found, str) else found
