"""Following a task the server made of a request (the 2026-07-28 extension `io.modelcontextprotocol/tasks`):
poll tasks/get at the interval the server suggests, answer its inputRequests with the client's own
handlers through tasks/update, and end with the result, or the error, the task ended with."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from weakref import WeakValueDictionary

import anyio

from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RemoteError
from ..protocol.extensions import declaring
from ..protocol.jsonrpc import JSON
from ..protocol.tasks import STATUS_NOTE, TASK_NOTE, TASKS_EXTENSION

__all__ = ["DECLARE_TASKS", "TaskFailed", "TaskHandle", "TaskWatch"]

Request = Callable[[str, JSON], Awaitable[JSON]]
Answer = Callable[[str, JSON], Awaitable[JSON]]
# the per-request declaration of the extension, for a request's `_meta`
DECLARE_TASKS: JSON = declaring(TASKS_EXTENSION)
_FIRST_POLL = 0.05  # seconds: a short task is seen done soon, then the server's interval applies


class TaskFailed(RemoteError):
    """The task ended failed (its JSON-RPC error) or cancelled."""


class TaskHandle:
    """A task the server created for a call (or, when it answered at once, that answer): `status`,
    `refresh()`, `result()` (follows the task to its end) and `cancel()`."""

    def __init__(self, request: Request, answer: Answer, first: JSON) -> None:
        self._request, self._answer = request, answer
        # 2025-11-25 answers {task}; the extension answers the task's fields flat, resultType "task"
        self.utility = isinstance(first.get("task"), dict)
        self.task: JSON = first["task"] if self.utility else first
        flat = self.utility or first.get("resultType") == "task"
        self.task_id: str | None = self.task.get("taskId") if flat else None
        self._answered: set[str] = set()
        self._news = anyio.Event()  # set by a status notification: stop waiting, look again

    def heard(self, task: JSON) -> None:
        """A status notification for this task: `task` is its state now (the poll wakes at once)."""
        self.task = task
        self._news.set()

    @property
    def status(self) -> str:
        return str(self.task.get("status", "completed")) if self.task_id else "completed"

    async def refresh(self) -> JSON:
        """tasks/get: the task now, with its result, error or outstanding inputRequests inlined."""
        if self.task_id is None:
            return self.task
        self.task = await self._request("tasks/get", {"taskId": self.task_id, "_meta": DECLARE_TASKS})
        return self.task

    async def cancel(self) -> None:
        """tasks/cancel (cooperative: the task may still end otherwise); `status` is then the server's."""
        if self.task_id is None:
            return
        answer = await self._request("tasks/cancel", {"taskId": self.task_id, "_meta": DECLARE_TASKS})
        if isinstance(answer.get("status"), str):  # 2025-11-25 answers with the task
            self.task = answer
        else:  # the extension acknowledges with an empty result
            await self.refresh()

    async def result(self, on_status: Callable[[JSON], None] | None = None) -> JSON:
        """The task's result once it completes (a tool's isError result included); TaskFailed if it
        fails or is cancelled. Input it asks for is answered by the client's handlers. Cancelling the
        caller cancels the task. `on_status(task)` sees each status as it changes."""
        if self.task_id is None:
            return self.task
        delay, seen = _FIRST_POLL, None
        try:
            while True:
                task = await self.refresh()
                status = task.get("status")
                if on_status is not None and status != seen:
                    on_status(task)  # each status once, as it changes
                    seen = status
                if self.utility and status in ("completed", "failed"):  # 2025-11-25: tasks/result
                    return await self._request("tasks/result", {"taskId": self.task_id})
                if status == "completed":
                    result: JSON = task.get("result") or {}
                    return result
                if status in ("failed", "cancelled"):
                    raise _failure(task)
                if status == "input_required":
                    await self._answer_input(task.get("inputRequests") or {})
                with anyio.move_on_after(delay):
                    await self._news.wait()
                self._news = anyio.Event()
                delay = max(delay, (task.get("pollIntervalMs") or task.get("pollInterval") or 1000) / 1000)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                await self.cancel()
            raise

    async def _answer_input(self, requests: JSON) -> None:
        responses: JSON = {}
        for key, request in requests.items():
            if key in self._answered or not isinstance(request, dict):
                continue  # "SHOULD deduplicate inputRequests keys across consecutive polls"
            inner = request.get("params")
            responses[key] = await self._answer(
                str(request.get("method")), inner if isinstance(inner, dict) else {}
            )
            self._answered.add(key)
        if responses:
            params = {"taskId": self.task_id, "inputResponses": responses, "_meta": DECLARE_TASKS}
            await self._request("tasks/update", params)


class TaskWatch:
    """Status notifications (2025-11-25 `notifications/tasks/status`, the extension's `notifications/tasks`)
    handed to the handles following those tasks and to `on_status(task)`. Optional in both eras: a
    handle still polls, and only wakes sooner when one arrives."""

    def __init__(self, on_status: Callable[[JSON], Awaitable[None] | None] | None = None) -> None:
        self.on_status = on_status
        self.handles: WeakValueDictionary[str, TaskHandle] = WeakValueDictionary()

    def follow(self, handle: TaskHandle) -> TaskHandle:
        if handle.task_id is not None:
            self.handles[handle.task_id] = handle
        return handle

    async def heard(self, method: str, params: JSON) -> None:
        task_id = params.get("taskId")
        if method not in (STATUS_NOTE, TASK_NOTE) or not isinstance(task_id, str):
            return
        task = {k: v for k, v in params.items() if k != "_meta"}
        handle = self.handles.get(task_id)
        if handle is not None:
            handle.heard(task)
        if self.on_status is not None:
            called = self.on_status(task)
            if inspect.isawaitable(called):
                await called


def _failure(task: JSON) -> TaskFailed:
    if task.get("status") == "cancelled":
        return TaskFailed(INVALID_PARAMS, f"task {task.get('taskId')!r} was cancelled")
    raw = task.get("error")
    error: JSON = raw if isinstance(raw, dict) else {}
    code = error.get("code")
    code = code if isinstance(code, int) else INTERNAL_ERROR
    return TaskFailed(code, str(error.get("message", "the task failed")), error.get("data"))
