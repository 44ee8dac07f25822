"""The Redis connections of one worker: a bounded pool that a command waits on for a while when every
connection is in use. Running out is the worker being busy (`PoolExhausted`: -32010, HTTP 429), not
Redis being away (503): the two need different answers from a client and from an operator."""

from __future__ import annotations

from typing import Any

from redis.asyncio import BlockingConnectionPool
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

__all__ = ["PoolExhausted", "WaitingPool"]


class PoolExhausted(RedisError):
    """Every connection of the worker's pool stayed in use for the pool's whole wait."""


class WaitingPool(BlockingConnectionPool):
    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        try:
            connection: AbstractConnection = await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
            return connection
        except RedisConnectionError as exc:
            # the blocking pool words its wait running out as a ConnectionError caused by a timeout
            if isinstance(exc.__cause__, TimeoutError):
                raise PoolExhausted(f"all {self.max_connections} Redis connections stayed busy") from exc
            raise
