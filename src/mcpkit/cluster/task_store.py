"""Tasks in Redis: every worker of a cluster answers for every task, and a task outlives the worker that
ran it. Each change is a compare-and-set on the record's revision (task_scripts.py), so of two workers
acting on the same state only one succeeds; the other reads the task again and sees what changed.
The bounds are those of server/tasks/store.py, across the cluster.

With `durability` asking for replicas (`wait_replicas`), what a client relies on is confirmed on them
before it is told: a created task before the CreateTaskResult, a task's end (its status, result or
error) before the update returns (so before its status notification) and again by a reader that finds
a task ended (so tasks/get, tasks/result and tasks/list never report an end that a failover could take
back: the reader's WAIT covers the writer's write, earlier in the replication stream). Unconfirmed, each
is the store unavailable (-32011): a client retrying is answered once a replica has it.

A failover may still take an end back (with `wait_replicas=0`, or the primary lost before a replica
confirmed it): the task would read as working again, its leg long over. So each worker keeps the ends it
wrote in the last `window` seconds (at most `max_bytes` of them) and writes them again when the session
store's failover watch sees another server answer (`store_again`, failover.py)."""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import orjson
from redis.exceptions import RedisError

from ..protocol.errors import STORE_UNAVAILABLE, MCPError
from ..protocol.tasks import Status
from ..server.tasks.store import MIB, Change, TaskRecord, too_large
from . import task_scripts
from .durability import Durability, NotDurable

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

__all__ = ["RedisTaskStore"]

_UNBOUNDED = 2**62  # a shrunk record is written even past the budget: the task must end
P = ParamSpec("P")
R = TypeVar("R")
_TRIES = 100  # compare-and-set rounds before giving up (each lost round means another worker wrote)


def _reachable(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Redis out of reach is the store unavailable (-32011, HTTP 503 with Retry-After on 2026-07-28), not
    an internal error: the client may retry."""

    @functools.wraps(method)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except NotDurable as exc:
            message = f"Service Unavailable: the task store's replicas did not confirm it ({exc})"
            raise MCPError(
                STORE_UNAVAILABLE, message, {"retryAfterMs": 1000, "reason": "not_durable"}
            ) from None
        except RedisError as exc:
            message = f"Service Unavailable: the task store (Redis) is unreachable ({exc})"
            raise MCPError(STORE_UNAVAILABLE, message, {"retryAfterMs": 1000}) from None

    return guarded


class RedisTaskStore:
    def __init__(
        self,
        redis: Redis | RedisCluster,
        prefix: str = "mcp:",
        *,
        max_tasks: int = 100_000,
        max_live: int = 10_000,
        max_bytes: int = 1024 * MIB,
        max_task_bytes: int = 16 * MIB,
        durability: Durability | None = None,
    ) -> None:
        if min(max_tasks, max_live, max_bytes, max_task_bytes) < 1:
            raise ValueError("task store bounds must be positive")
        self.redis, self.prefix = redis, prefix
        # every key of the store shares the hash tag `{t}`: its bounds are exact, in one slot of a cluster
        self.space = prefix + "{t}:"
        self.max_tasks = max_tasks
        self.max_live = max_live
        self.max_bytes = max_bytes
        self.max_task_bytes = max_task_bytes
        self.durability = durability or Durability(redis)
        self.ends: dict[str, tuple[float, bytes]] = {}  # task -> (when it ended here, its record)
        self.ends_size = 0
        self.window = 60.0
        self.max_bytes_kept = 16 * MIB
        self._create = redis.register_script(task_scripts.CREATE)
        self._update = redis.register_script(task_scripts.UPDATE)

    def _key(self, task_id: str) -> str:
        return f"{self.space}task-rec:{task_id}"  # not `task:`, a string before: never read as a hash

    @_reachable
    async def create(self, record: TaskRecord, max_per_owner: int) -> bool:
        """Written (and acknowledged by Redis, and by `durability`'s replicas) before the CreateTaskResult
        goes out."""
        data = _dump(record)
        if len(data) > self.max_task_bytes:
            return False
        expiry = record.expires_at()
        kept = await self._create(
            keys=[self._key(record.task_id)],
            args=[
                self.space,
                _ms(time.time()),
                record.task_id,
                record.owner or "",
                data,
                "+inf" if math.isinf(expiry) else _ms(expiry),
                record.ttl_ms or 0,
                max_per_owner,
                self.max_live,
                self.max_tasks,
                self.max_bytes,
                _ms(record.created_at),
            ],
        )
        if kept:
            await self._confirm()
        return bool(kept)

    @_reachable
    async def get(self, task_id: str) -> TaskRecord | None:
        raw, confirmed = await self.redis.hmget(self._key(task_id), ["data", "cf"])
        record = _load(raw) if raw is not None else None
        if record is not None and record.status.terminal and confirmed is None:
            await self._confirm_end(task_id)
        return record

    async def _confirm(self) -> None:
        """What was written in the store's slot so far is on the replicas `durability` asks for."""
        await self.durability.confirm(self.space + "w")

    async def _confirm_end(self, task_id: str) -> None:
        """A task's end confirmed on the replicas, and marked so (`cf`): a reader finding the mark
        answers without waiting for replicas again, so an ended task stays readable while its shard has
        fewer replicas than asked (after a failover), once its end was confirmed."""
        await self._confirm()
        if self.durability.replicas > 0:
            await self.redis.hset(self._key(task_id), "cf", b"1")

    @_reachable
    async def update(self, task_id: str, change: Change) -> tuple[TaskRecord | None, bool]:
        key = self._key(task_id)
        for _ in range(_TRIES):
            rev, raw = await self.redis.hmget(key, ["rev", "data"])
            if rev is None or raw is None:
                return None, False
            record = _load(raw)
            if not change(record):
                return record, False
            data = _dump(record)
            if len(data) > self.max_task_bytes and too_large(record):
                data = _dump(record)
            written = await self._write(task_id, rev, record, data, self.max_bytes)
            if written < 0:  # no room even after the finished tasks made some
                too_large(record)
                written = await self._write(task_id, rev, record, _dump(record), _UNBOUNDED)
            if written > 0:
                if record.status.terminal:
                    self._ended(task_id, data)
                    await self._confirm_end(task_id)
                return record, True
        raise RuntimeError(f"task {task_id!r} kept changing under {_TRIES} attempts to change it")

    async def _write(
        self, task_id: str, rev: bytes | str, record: TaskRecord, data: bytes, budget: int
    ) -> int:
        written = await self._update(
            keys=[self._key(task_id)],
            args=[
                self.space,
                _ms(time.time()),
                task_id,
                rev,
                data,
                record.status.value,
                "1" if record.status.terminal else "0",
                _ms(record.updated_at),
                self.max_tasks,
                budget,
            ],
        )
        return int(written)

    def _ended(self, task_id: str, data: bytes) -> None:
        """A task's end was written here: kept for `window` seconds, for `store_again`."""
        old = self.ends.pop(task_id, None)
        self.ends_size += len(data) - (len(old[1]) if old else 0)
        self.ends[task_id] = (time.monotonic(), data)
        horizon = time.monotonic() - self.window
        while self.ends:
            first = next(iter(self.ends))
            when, kept = self.ends[first]
            if when >= horizon and self.ends_size <= self.max_bytes_kept:
                break
            del self.ends[first]
            self.ends_size -= len(kept)

    async def store_again(self) -> int:
        """The ends kept here written again where the store lost them (the task is back at an earlier
        state of the same leg): how many were. For the failover watch, after a failover."""
        again = 0
        for task_id, (_, data) in list(self.ends.items()):
            try:
                _, changed = await self.update(task_id, _restored(_load(data)))
            except MCPError:  # the store away again, or not confirming: the next failover tries again
                break
            again += changed
        return again

    @_reachable
    async def owned(self, owner: str | None) -> list[TaskRecord]:
        ids = await self.redis.zrange(f"{self.space}tasks:own:{owner or ''}", 0, -1)
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for task_id in ids:
                key = self._key(task_id.decode() if isinstance(task_id, bytes) else str(task_id))
                pipe.hmget(key, ["data", "cf"])
            found = await pipe.execute()
        kept = [(_load(raw), confirmed) for raw, confirmed in found if raw is not None]
        if any(record.status.terminal and confirmed is None for record, confirmed in kept):
            await self._confirm()
        return [record for record, _ in kept]


def _restored(end: TaskRecord) -> Change:
    """The task as it ended, unless it has ended since or moved past that leg."""

    def restore(task: TaskRecord) -> bool:
        if task.status.terminal or task.leg > end.leg:
            return False
        for field in dataclasses.fields(TaskRecord):
            setattr(task, field.name, getattr(end, field.name))
        return True

    return restore


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _dump(record: TaskRecord) -> bytes:
    return orjson.dumps(record)


def _load(raw: bytes | str) -> TaskRecord:
    data: dict[str, Any] = orjson.loads(raw)
    data["status"] = Status(data["status"])
    return TaskRecord(**data)
