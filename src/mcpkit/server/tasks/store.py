"""Where tasks are kept: `TaskStore` is the interface (a shared store such as Redis implements it, so
any worker answers for any task), `InMemoryTaskStore` the bounded default for one process.

A record holds everything a worker needs to answer tasks/get and to run the task's next leg: the
call (tool, arguments, the client's declared capabilities), the answers to the client's input so
far, the outstanding inputRequests, and the outcome. Every change of a kept task is one atomic step
(`update`), so two workers never both act on the same state (say, both resume a task).

Bounds, in both stores: `max_live` unfinished tasks at once (a create past it is refused),
`max_tasks` tasks kept at once and `max_bytes` of them in all (finished tasks make room, oldest
first; a create that still does not fit is refused), `max_task_bytes` for one task (a result past
it, or past what the budget can hold, fails its task with a short error instead of being kept).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import orjson

from ...protocol.errors import INTERNAL_ERROR, error_object
from ...protocol.jsonrpc import JSON
from ...protocol.tasks import Status, advance, task_fields

__all__ = ["Change", "InMemoryTaskStore", "TaskRecord", "TaskStore", "too_large"]

MIB = 1024 * 1024


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
    leg: int = 0  # which run of the tool is the current one: an older run's outcome is ignored

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now > self.created_at + self.ttl_ms / 1000

    def expires_at(self) -> float:
        return math.inf if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def fields(self) -> JSON:
        """The Task's fields on the wire (both eras present them; protocol/tasks.py)."""
        return task_fields(
            self.task_id,
            self.status,
            self.created_at,
            self.updated_at,
            self.ttl_ms,
            self.poll_interval_ms,
            self.status_message,
        )


Change = Callable[[TaskRecord], bool]
"""Changes the task it is given in place; returns whether it changed anything. It may run more than
once (on a fresh copy each time another worker changed the task first), so it must do no I/O."""


class TaskStore(Protocol):
    async def create(self, record: TaskRecord, max_per_owner: int) -> bool:
        """Keep a new task unless its owner has `max_per_owner` unfinished ones or the store is full;
        when this returns True, `get` finds it (SEP-2663 "durably created")."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None when unknown or past its ttl."""
        ...

    async def update(self, task_id: str, change: Change) -> tuple[TaskRecord | None, bool]:
        """Apply `change` to the task as it is now, in one atomic step: the task as kept after it
        (None when gone) and whether it changed."""
        ...

    async def owned(self, owner: str | None) -> list[TaskRecord]:
        """`owner`'s tasks, oldest first (2025-11-25 tasks/list)."""
        ...


def size_of(record: TaskRecord) -> int:
    return len(orjson.dumps(record))


def too_large(record: TaskRecord) -> bool:
    """Make room in a task whose record no longer fits: it fails with a short error and keeps no
    result, answers or requests. False when there was nothing to drop."""
    if record.result is None and record.error is None and not record.answers and not record.input_requests:
        return False
    message = "The task's result is larger than the server keeps"
    if not record.status.terminal or record.status is Status.COMPLETED:
        record.status = Status.FAILED if record.status.terminal else advance(record.status, Status.FAILED)
    if record.status is Status.FAILED:
        record.status_message = message
        record.error = error_object(INTERNAL_ERROR, f"Internal error: {message}", {"reason": "too_large"})
    else:
        record.error = None
    record.result = None
    record.answers = {}
    record.input_requests = {}
    return True


class InMemoryTaskStore:
    """Tasks in this process, within the bounds the module describes."""

    def __init__(
        self,
        max_tasks: int = 10_000,
        *,
        max_live: int = 1_000,
        max_bytes: int = 256 * MIB,
        max_task_bytes: int = 16 * MIB,
    ) -> None:
        if min(max_tasks, max_live, max_bytes, max_task_bytes) < 1:
            raise ValueError("task store bounds must be positive")
        self.max_tasks = max_tasks
        self.max_live = max_live
        self.max_bytes = max_bytes
        self.max_task_bytes = max_task_bytes
        self.bytes = 0
        self._tasks: dict[str, TaskRecord] = {}
        self._sizes: dict[str, int] = {}
        self._live: dict[str | None, set[str]] = {}  # unfinished, per owner
        self._owned: dict[str | None, dict[str, None]] = {}  # per owner, in creation order
        self._done: dict[str, None] = {}  # finished, oldest first
        self._expiry: list[tuple[float, str]] = []  # a heap

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def live(self) -> int:
        return len(self._tasks) - len(self._done)

    async def create(self, record: TaskRecord, max_per_owner: int) -> bool:
        self._sweep(time.time())
        size = size_of(record)
        if len(self._live.get(record.owner, ())) >= max_per_owner or self.live >= self.max_live:
            return False
        if size > self.max_task_bytes or not self._room(size, 1):
            return False
        task_id = record.task_id
        self._tasks[task_id], self._sizes[task_id] = record, size
        self.bytes += size
        self._live.setdefault(record.owner, set()).add(task_id)
        self._owned.setdefault(record.owner, {})[task_id] = None
        heapq.heappush(self._expiry, (record.expires_at(), task_id))
        return True

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is not None and record.expired(time.time()):
            self._drop(task_id)
            return None
        return record

    async def update(self, task_id: str, change: Change) -> tuple[TaskRecord | None, bool]:
        # in place, with no await between the read and the write: atomic in this process, and a
        # running leg sees what changed (its ctx.cancelled)
        record = await self.get(task_id)
        if record is None or not change(record):
            return record, False
        self._done.pop(task_id, None)  # not a candidate while it is being made to fit
        old = self._sizes[task_id]
        size = size_of(record)
        if size > self.max_task_bytes or not self._room(size - old, 0):
            too_large(record)
            size = size_of(record)
        self._sizes[task_id] = size
        self.bytes += size - old
        if record.status.terminal:
            self._live.get(record.owner, set()).discard(task_id)
            self._done[task_id] = None
        return record, True

    async def owned(self, owner: str | None) -> list[TaskRecord]:
        now = time.time()
        ids = list(self._owned.get(owner, ()))
        return [r for r in (self._tasks[i] for i in ids) if not r.expired(now)]

    def _room(self, grow: int, more: int) -> bool:
        """Drop finished tasks, oldest first, until `grow` more bytes and `more` more tasks fit."""
        while self.bytes + grow > self.max_bytes or len(self._tasks) + more > self.max_tasks:
            if not self._done:
                return False
            self._drop(next(iter(self._done)))
        return True

    def _sweep(self, now: float) -> None:
        while self._expiry and self._expiry[0][0] < now:
            _, task_id = heapq.heappop(self._expiry)
            self._drop(task_id)
        if len(self._expiry) > 2 * len(self._tasks) + 64:  # entries of tasks dropped to make room
            self._expiry = [(r.expires_at(), i) for i, r in self._tasks.items()]
            heapq.heapify(self._expiry)

    def _drop(self, task_id: str) -> None:
        record = self._tasks.pop(task_id, None)
        if record is None:
            return
        self.bytes -= self._sizes.pop(task_id)
        self._done.pop(task_id, None)
        self._live.get(record.owner, set()).discard(task_id)
        owned = self._owned.get(record.owner)
        if owned is not None:
            owned.pop(task_id, None)
            if not owned:
                del self._owned[record.owner]
                self._live.pop(record.owner, None)
