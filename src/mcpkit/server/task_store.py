"""Where tasks are kept: `TaskStore` is the interface (a shared store such as Redis implements it, so
any worker answers for any task), `InMemoryTaskStore` the bounded default for one process.

A record holds everything a worker needs to answer tasks/get and to run the task's next leg: the
call (tool, arguments, the client's declared capabilities), the answers to the client's input so
far, the outstanding inputRequests, and the outcome.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..protocol.tasks import Status

__all__ = ["InMemoryTaskStore", "TaskRecord", "TaskStore"]

JSON = dict[str, Any]


@dataclass(slots=True)
class TaskRecord:
    task_id: str
    owner: str | None  # the principal whose token created it (None: no authorization)
    tool: str
    arguments: JSON | None
    client: JSON  # the capabilities the creating request declared
    version: str
    created_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    status: Status = Status.WORKING
    updated_at: float = 0.0
    status_message: str | None = None
    result: JSON | None = None
    error: JSON | None = None
    input_requests: JSON = field(default_factory=dict)  # outstanding, by key
    answers: JSON = field(default_factory=dict)  # every answer so far, by key
    cancel_requested: bool = False
    runner: str | None = None  # the worker running its leg now, when several share the store

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now > self.created_at + self.ttl_ms / 1000


class TaskStore(Protocol):
    async def create(self, record: TaskRecord) -> None:
        """Keep a new task; when this returns, `get` finds it (SEP-2663 "durably created")."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None when unknown or past its ttl."""
        ...

    async def save(self, record: TaskRecord) -> None: ...

    async def live(self, owner: str | None) -> int:
        """How many of `owner`'s tasks are not terminal."""
        ...

    async def owned(self, owner: str | None) -> list[TaskRecord]:
        """`owner`'s tasks, oldest first (2025-11-25 tasks/list)."""
        ...


class InMemoryTaskStore:
    """Tasks in this process, at most `max_tasks` (the oldest terminal ones go first past it; a store
    full of running tasks refuses more, see TaskEngine)."""

    def __init__(self, max_tasks: int = 10_000) -> None:
        self.max_tasks = max_tasks
        self._tasks: dict[str, TaskRecord] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord) -> None:
        self._sweep()
        self._tasks[record.task_id] = record

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is not None and record.expired(time.time()):
            del self._tasks[task_id]
            return None
        return record

    async def save(self, record: TaskRecord) -> None:
        if record.task_id in self._tasks:
            self._tasks[record.task_id] = record

    async def live(self, owner: str | None) -> int:
        return sum(1 for r in self._tasks.values() if r.owner == owner and not r.status.terminal)

    async def owned(self, owner: str | None) -> list[TaskRecord]:
        now = time.time()
        return sorted(
            (r for r in self._tasks.values() if r.owner == owner and not r.expired(now)),
            key=lambda r: r.created_at,
        )

    def _sweep(self) -> None:
        now = time.time()
        for task_id in [t for t, r in self._tasks.items() if r.expired(now)]:
            del self._tasks[task_id]
        if len(self._tasks) >= self.max_tasks:
            done = sorted((r.updated_at, t) for t, r in self._tasks.items() if r.status.terminal)
            for _, task_id in done[: len(self._tasks) - self.max_tasks + 1]:
                del self._tasks[task_id]
