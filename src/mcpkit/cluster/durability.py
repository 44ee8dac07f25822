"""Writes a client relies on, confirmed on replicas before the answer: `WAIT numreplicas timeout`
(`RedisBackplane(wait_replicas=..., wait_timeout=...)`; off by default).

Redis replicates asynchronously: a primary lost before a write reached a replica takes the write with
it when that replica is promoted. WAIT blocks until the replicas acknowledged every write made before
it on the same connection, so `confirm` writes a marker key in the slot of the write to confirm (on a
pooled connection, after that write was acknowledged: the marker is later in the replication stream)
and WAITs on that connection. Too few replicas in time is `NotDurable`, a RedisError: the write is
answered as a store failure (503, or the task store's -32011), never acknowledged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["Durability", "NotDurable"]


class NotDurable(RedisError):
    """A write was not confirmed on the asked number of replicas within the timeout."""


class Durability:
    def __init__(self, redis: Redis | RedisCluster, replicas: int = 0, timeout: float = 1.0) -> None:
        if replicas < 0 or timeout <= 0:
            raise ValueError("wait_replicas must be 0 or more and wait_timeout positive")
        self.redis = redis
        self.replicas = replicas
        self.timeout_ms = max(1, int(timeout * 1000))

    async def confirm(self, marker: str) -> None:
        """Every write acknowledged before now in `marker`'s slot is on `replicas` replicas (nothing
        when off); NotDurable if not within the timeout."""
        if self.replicas == 0:
            return
        if isinstance(self.redis, RedisCluster):
            acked = await self._on_node(self.redis, marker)
        else:
            async with self.redis.pipeline(transaction=False) as pipe:  # one connection
                pipe.set(marker, b"1", px=self.timeout_ms * 2)
                pipe.wait(self.replicas, self.timeout_ms)
                acked = int((await pipe.execute())[1])
        if acked < self.replicas:
            why = f"the write reached {acked} of {self.replicas} replicas within {self.timeout_ms} ms"
            raise NotDurable(f"not durable: {why} (wait_replicas)")

    async def _on_node(self, cluster: RedisCluster, marker: str) -> int:
        """The marker and WAIT on one connection of the primary of `marker`'s slot (the cluster
        client's own WAIT goes to every primary on connections that wrote nothing)."""
        node = cluster.get_node_from_key(marker)
        if node is None:
            raise NotDurable(f"no node of the cluster serves {marker!r} now")
        connection = node.acquire_connection()
        try:
            commands = [
                ("SET", marker, b"1", "PX", self.timeout_ms * 2),
                ("WAIT", self.replicas, self.timeout_ms),
            ]
            await connection.send_packed_command(connection.pack_commands(commands))
            await connection.read_response()
            return int(await connection.read_response())
        finally:
            node.release(connection)
