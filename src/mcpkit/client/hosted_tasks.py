"""Tasks this client hosts for its server (the 2025-11-25 tasks utility, client side): a server may send
sampling/createMessage or elicitation/create with `task`; a client that declared
`tasks.requests.<that request>` answers at once with a CreateTaskResult, runs its own handler in the
background and serves tasks/get, tasks/result, tasks/list and tasks/cancel for the task.

The tasks live in this process, beside the handler doing the work (a model call, a person answering):
nothing elsewhere could resume one, so there is no shared store; they end with the client.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from ..protocol.errors import (
    INTERNAL_ERROR,
    InvalidParams,
    InvalidRequest,
    MCPError,
    to_wire_error,
)
from ..protocol.jsonrpc import JSON
from ..protocol.pagination import page
from ..protocol.tasks import (
    Status,
    advance,
    final_outcome,
    task_fields,
    task_id_of,
    utility_task,
)

__all__ = ["TaskHost"]

log = logging.getLogger("mcpkit")

Answer = Callable[[str, JSON], Awaitable[JSON]]  # the client's own answer to a server request
# tasks.requests.<category>.<request> for each request a server may augment (tasks "Client Capabilities")
_REQUESTS: Final = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}


@dataclass(eq=False)
class HostedTask:
    task_id: str
    method: str
    created_at: float
    ttl_ms: int
    updated_at: float
    status: Status = Status.WORKING
    status_message: str | None = None
    result: JSON | None = None
    error: JSON | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def expired(self, now: float) -> bool:
        return now > self.created_at + self.ttl_ms / 1000

    def move(self, to: Status, message: str | None = None) -> None:
        self.status, self.updated_at = advance(self.status, to), time.time()
        self.status_message = message


class TaskHost:
    """The tasks a Client runs for its server: `Client(..., tasks=True)` or `tasks=TaskHost(...)`, one per
    Client. The capability is declared in a 2025-11-25 initialize only (no other version has it).

    `max_ttl_ms` caps the ttl a server asks for (and is the ttl when it asks for none): a task and its
    result are kept that long from its creation. `max_tasks` caps the tasks kept at once (the oldest
    finished go first; with all of them unfinished a new one is refused, -32600). `poll_interval_ms` is
    the polling interval suggested to the server, `page_size` the tasks per tasks/list page. `requests`:
    the requests that may become tasks (those the client also has a handler for are declared).
    """

    def __init__(
        self,
        *,
        max_ttl_ms: int = 3_600_000,
        max_tasks: int = 100,
        poll_interval_ms: int = 500,
        page_size: int = 50,
        requests: Collection[str] = tuple(_REQUESTS),
    ) -> None:
        if min(max_ttl_ms, max_tasks, poll_interval_ms, page_size) < 1:
            raise ValueError("task ttl, cap, poll interval and page size must be positive")
        self.max_ttl_ms, self.max_tasks = max_ttl_ms, max_tasks
        self.poll_interval_ms, self.page_size = poll_interval_ms, page_size
        unknown = set(requests) - set(_REQUESTS)
        if unknown:
            raise ValueError(f"only {', '.join(_REQUESTS)} may become client tasks, not {sorted(unknown)}")
        self.requests = frozenset(requests)
        self._tasks: dict[str, HostedTask] = {}
        self._declared: frozenset[str] = frozenset()
        self._group: TaskGroup | None = None
        self._served: dict[str, Callable[[JSON], Awaitable[JSON]]] = {
            "tasks/get": self._get,
            "tasks/result": self._result,
            "tasks/list": self._list,
            "tasks/cancel": self._cancel,
        }

    @classmethod
    def declared(
        cls, tasks: bool | TaskHost, capabilities: JSON, sampling: bool, elicitation: bool
    ) -> TaskHost | None:
        """The host a Client's `tasks` option asks for (None for False); adds its capability."""
        host = cls() if tasks is True else tasks or None
        if host is not None:
            capabilities["tasks"] = host.capability(sampling, elicitation)
        return host

    def capability(self, sampling: bool, elicitation: bool) -> JSON:
        """The `tasks` client capability: the requests this client has handlers for may become tasks."""
        handled = (("sampling/createMessage", sampling), ("elicitation/create", elicitation))
        methods = [m for m, has in handled if has and m in self.requests]
        self._declared = frozenset(methods)
        requests: JSON = {}
        for method in methods:
            category, name = _REQUESTS[method]
            requests[category] = {name: {}}
        return {"list": {}, "cancel": {}, "requests": requests}

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Handlers run while the client is open; closing it cancels those still running."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                self._tasks.clear()  # the tasks end with the client
                group.cancel_scope.cancel()

    async def answer(self, method: str, params: JSON, plain: Answer) -> JSON:
        """The client's answer to a server request: tasks/* served here; a task-augmented request of a
        declared type becomes a task; any other is answered by `plain`, without its `task` field
        (tasks "Task Support and Handling": an undeclared type MUST be processed normally)."""
        served = self._served.get(method)
        if served is not None:
            return await served(params)
        if "task" not in params:
            return await plain(method, params)
        inner = {k: v for k, v in params.items() if k != "task"}
        if method not in self._declared:
            return await plain(method, inner)
        return self._create(method, params["task"], lambda: plain(method, inner))

    # ---- creating and running ---------------------------------------------------------------

    def _create(self, method: str, task: Any, run: Callable[[], Awaitable[JSON]]) -> JSON:
        ttl = task.get("ttl") if isinstance(task, dict) else None
        if not isinstance(task, dict) or (ttl is not None and (not isinstance(ttl, int) or ttl < 1)):
            raise InvalidParams("Invalid params: task must be an object with a positive integer ttl")
        if self._group is None:
            raise MCPError(INTERNAL_ERROR, "Internal error: the client is closing")
        self._make_room()
        now = time.time()
        record = HostedTask(
            task_id=secrets.token_urlsafe(24),  # unguessable: the id is all a requestor needs
            method=method,
            created_at=now,
            ttl_ms=min(ttl, self.max_ttl_ms) if ttl is not None else self.max_ttl_ms,  # capped, and reported
            updated_at=now,
        )
        self._tasks[record.task_id] = record
        self._group.start_soon(self._run, record, run)
        return {"task": self._wire(record)}  # tasks "Result Retrieval": CreateTaskResult, at once

    def _make_room(self) -> None:
        now = time.time()
        for record in [r for r in self._tasks.values() if r.expired(now)]:
            self._drop(record)
        if len(self._tasks) < self.max_tasks:
            return
        finished = sorted((r for r in self._tasks.values() if r.status.terminal), key=lambda r: r.updated_at)
        if not finished:
            raise InvalidRequest(f"Too many unfinished tasks (at most {self.max_tasks})")
        self._drop(finished[0])

    def _drop(self, record: HostedTask) -> None:
        """Forget a task (ttl elapsed, or room needed): its handler, if still running, stops."""
        del self._tasks[record.task_id]
        record.scope.cancel()
        record.done.set()

    async def _run(self, record: HostedTask, run: Callable[[], Awaitable[JSON]]) -> None:
        try:
            with record.scope:
                try:
                    result = await run()
                except MCPError as exc:
                    self._settle(record, Status.FAILED, error=to_wire_error(exc), message=exc.message)
                except Exception as exc:
                    log.exception("the handler of hosted task %s (%s) failed", record.task_id, record.method)
                    self._settle(record, Status.FAILED, error=to_wire_error(exc), message="Internal error")
                else:
                    self._settle(record, Status.COMPLETED, result=result)
        finally:
            record.done.set()

    @staticmethod
    def _settle(
        record: HostedTask,
        to: Status,
        *,
        result: JSON | None = None,
        error: JSON | None = None,
        message: str | None = None,
    ) -> None:
        if record.status.terminal:  # tasks "Task Cancellation": a cancelled task stays cancelled
            return
        record.result, record.error = result, error
        record.move(to, message)

    # ---- tasks/get, tasks/result, tasks/list, tasks/cancel ----------------------------------

    def _find(self, params: JSON) -> HostedTask:
        task_id = task_id_of(params)  # tasks "Protocol Errors": -32602 for an invalid or unknown id
        record = self._tasks.get(task_id)
        if record is not None and record.expired(time.time()):
            self._drop(record)
            record = None
        if record is None:
            raise InvalidParams(f"Invalid params: no task {task_id!r}")
        return record

    def _wire(self, record: HostedTask) -> JSON:
        fields = task_fields(
            record.task_id,
            record.status,
            record.created_at,
            record.updated_at,
            record.ttl_ms,
            self.poll_interval_ms,
            record.status_message,
        )
        return utility_task(fields)

    async def _get(self, params: JSON) -> JSON:
        return self._wire(self._find(params))

    async def _result(self, params: JSON) -> JSON:
        """Held until the task is terminal, then exactly what the request would have answered, the
        result tagged with its related task (tasks "Result Retrieval")."""
        record = self._find(params)
        await record.done.wait()
        if record.task_id not in self._tasks:
            raise InvalidParams(f"Invalid params: task {record.task_id!r} has expired")
        return final_outcome(record.task_id, record.status, record.result, record.error)

    async def _list(self, params: JSON) -> JSON:
        now = time.time()
        kept = sorted((r for r in self._tasks.values() if not r.expired(now)), key=lambda r: r.created_at)
        start, stop, next_cursor = page(len(kept), params.get("cursor"), self.page_size)  # bad: -32602
        listed: JSON = {"tasks": [self._wire(r) for r in kept[start:stop]]}
        return listed | ({"nextCursor": next_cursor} if next_cursor else {})

    async def _cancel(self, params: JSON) -> JSON:
        """The task, cancelled before the answer goes (tasks "Task Cancellation"), its handler stopped;
        a task already terminal is refused with -32602."""
        record = self._find(params)
        if record.status.terminal:
            raise InvalidParams(f"Invalid params: task {record.task_id!r} is already {record.status.value}")
        record.move(Status.CANCELLED, "The task was cancelled by request.")
        record.scope.cancel()
        record.done.set()
        return self._wire(record)
