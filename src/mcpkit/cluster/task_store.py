"""Tasks in Redis: every worker of a cluster answers for every task, and a task outlives the worker that
ran it. A record is one JSON value under `{prefix}task:{id}` that expires with the task's ttl; the ids
of an owner's unfinished tasks are a set, for the per-owner cap."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.tasks import Status
from ..server.task_store import TaskRecord

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisTaskStore"]

_DAY_MS = 86_400_000


class RedisTaskStore:
    def __init__(self, redis: Redis, prefix: str = "mcp:") -> None:
        self.redis, self.prefix = redis, prefix

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _live(self, owner: str | None) -> str:
        return f"{self.prefix}tasks-live:{owner or ''}"

    def _all(self, owner: str | None) -> str:
        return f"{self.prefix}tasks-all:{owner or ''}"

    async def owned(self, owner: str | None) -> list[TaskRecord]:
        ids = [i.decode() if isinstance(i, bytes) else i for i in await self.redis.smembers(self._all(owner))]
        found = [await self.get(i) for i in ids]
        return sorted((r for r in found if r is not None), key=lambda r: r.created_at)

    async def create(self, record: TaskRecord) -> None:
        """Written (and acknowledged by Redis) before the CreateTaskResult goes out."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(record.task_id), _dump(record), px=record.ttl_ms or None)
            pipe.sadd(self._live(record.owner), record.task_id)
            pipe.sadd(self._all(record.owner), record.task_id)
            pipe.pexpire(self._all(record.owner), max(record.ttl_ms or _DAY_MS, _DAY_MS))
            pipe.pexpire(self._live(record.owner), max(record.ttl_ms or _DAY_MS, _DAY_MS))
            await pipe.execute()

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self.redis.get(self._key(task_id))
        return _load(raw) if raw is not None else None

    async def save(self, record: TaskRecord) -> None:
        """Overwrite a task that still exists, keeping its expiry; a terminal one leaves the live set."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(record.task_id), _dump(record), xx=True, keepttl=True)
            if record.status.terminal:
                pipe.srem(self._live(record.owner), record.task_id)
            await pipe.execute()

    async def live(self, owner: str | None) -> int:
        """The owner's unfinished tasks (ids whose record expired are dropped on the way)."""
        ids = [
            i.decode() if isinstance(i, bytes) else i for i in await self.redis.smembers(self._live(owner))
        ]
        if not ids:
            return 0
        exists = [await self.redis.exists(self._key(i)) for i in ids]
        gone = [i for i, there in zip(ids, exists, strict=True) if not there]
        if gone:
            await self.redis.srem(self._live(owner), *gone)
        return len(ids) - len(gone)


def _dump(record: TaskRecord) -> bytes:
    data: dict[str, Any] = asdict(record)
    data["status"] = record.status.value
    return orjson.dumps(data)


def _load(raw: bytes | str) -> TaskRecord:
    data = orjson.loads(raw)
    data["status"] = Status(data["status"])
    return TaskRecord(**data)
