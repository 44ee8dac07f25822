"""The Redis connections of one worker: a bounded pool that a command waits on for a while when every
connection is in use. Running out is the worker being busy (`PoolExhausted`: -32010, HTTP 429), not
Redis being away (503): the two need different answers from a client and from an operator.

Its connections count what they do (`Traffic`): each command or pipeline sent is a round trip, and each
one that failed to reach Redis or to come back (refused, reset, timed out, a wrong password) an error;
an error Redis answered with (a script's own) is neither."""

from __future__ import annotations

from typing import Any

from redis.asyncio import BlockingConnectionPool
from redis.asyncio.connection import AbstractConnection, Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["PoolExhausted", "Traffic", "WaitingPool"]


class PoolExhausted(RedisError):
    """Every connection of the worker's pool stayed in use for the pool's whole wait."""


class Traffic:
    """Round trips this worker made to Redis, and the failed ones by exception name (a bounded set: the
    client library's own classes)."""

    def __init__(self) -> None:
        self.round_trips = 0
        self.errors: dict[str, int] = {}

    def failed(self, exc: BaseException) -> None:
        name = type(exc).__name__
        self.errors[name] = self.errors.get(name, 0) + 1


_UNREACHED = (RedisConnectionError, RedisTimeoutError)


class _Counting(AbstractConnection):
    """Put before a connection class: its sends and failed reads counted in `traffic`."""

    traffic: Traffic

    async def connect(self) -> None:
        try:
            await super().connect()  # type: ignore[no-untyped-call]
        except _UNREACHED as exc:
            self.traffic.failed(exc)
            raise

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if not self.is_connected:
            await self.connect()  # a failure counted once, there
        self.traffic.round_trips += 1
        try:
            await super().send_packed_command(command, check_health)
        except _UNREACHED as exc:
            self.traffic.failed(exc)
            raise

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)
        except _UNREACHED as exc:
            self.traffic.failed(exc)
            raise


class WaitingPool(BlockingConnectionPool):
    def __init__(self, connection_class: type[AbstractConnection] = Connection, **kwargs: Any) -> None:
        self.traffic = Traffic()
        counted = type(
            f"Counted{connection_class.__name__}", (_Counting, connection_class), {"traffic": self.traffic}
        )
        super().__init__(connection_class=counted, **kwargs)

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        try:
            connection: AbstractConnection = await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
            return connection
        except RedisConnectionError as exc:
            # the blocking pool words its wait running out as a ConnectionError caused by a timeout
            if isinstance(exc.__cause__, TimeoutError):
                raise PoolExhausted(f"all {self.max_connections} Redis connections stayed busy") from exc
            raise
