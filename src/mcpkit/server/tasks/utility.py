"""Tasks in the 2025-11-25 era (the tasks utility): a tools/call with `task` answers a CreateTaskResult
at once; tasks/get, tasks/result, tasks/list and tasks/cancel answer for the requestor's tasks.

A task's leg talks to the client over the session (the utility has no inputRequests).

Its asks are requests tagged with the task (utilities "Associating Task-Related Messages": MUST), and
while one is unanswered the task is `input_required`, `working` again once answered ("Input Required
Status"). Its progress goes on the progressToken of the tools/call that created it, which "remains
valid throughout the task lifetime" ("Task Progress Notifications"), and stops once the task has ended.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from ...protocol.errors import (
    INTERNAL_ERROR,
    InvalidParams,
    LocalError,
    MCPError,
    MethodNotFound,
)
from ...protocol.jsonrpc import JSON
from ...protocol.pagination import page
from ...protocol.tasks import RELATED_TASK, Status, final_outcome, utility_task
from ...protocol.utilities import progress_params
from ...runtime._native import spawn_detached
from ..asking import SessionAsker
from ..context import Context
from .changes import moved
from .dialect import TaskDialect
from .engine import TaskEngine
from .legs import Leg, TaskContext
from .store import TaskRecord

if TYPE_CHECKING:
    from ...runtime.session import Session
    from ..peers import Peers
    from ..services import Services
    from ..tools import Tool

__all__ = ["UtilityAsker", "UtilityContext", "UtilityTasks"]

_LIST_PAGE = 100  # tasks a tasks/list page holds


def related(task_id: str, params: JSON) -> JSON:
    """`params` with the related-task `_meta` added (a copy)."""
    meta = params.get("_meta")
    return {
        **params,
        "_meta": {**(meta if isinstance(meta, dict) else {}), RELATED_TASK: {"taskId": task_id}},
    }


class UtilityAsker:
    """Asks over its leg's session (`ctx.session`) for task `task_id`; input_required while any ask is
    unanswered."""

    def __init__(self, task_id: str, engine: TaskEngine, peers: Peers, timeout: float | None) -> None:
        self.task_id = task_id
        self.engine = engine
        self.peers = peers  # whose listeners hear of the task's changes
        self.timeout = timeout
        self.answers: dict[str, JSON] = {}  # each ask is answered over the leg's session as it is made
        self.ctx: Context | None = None  # the leg's UtilityContext, which makes this asker
        self.asking = 0

    async def ask(self, method: str, params: JSON, key: str | None = None) -> JSON:
        assert self.ctx is not None
        async with self.waiting():
            # related to no request: the tools/call was answered, so it goes on the standalone stream
            params = related(self.task_id, params)
            return await self.ctx.session.request(method, params, timeout=self.timeout)

    async def ask_many(self, requests: dict[str, JSON]) -> dict[str, JSON]:
        answers: dict[str, JSON] = {}

        async def one(key: str, request: JSON) -> None:
            answers[key] = await self.ask(request["method"], request.get("params") or {})

        async with self.waiting(), anyio.create_task_group() as tg:
            for key, request in requests.items():
                tg.start_soon(one, key, request)
        return answers

    @asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        self.asking += 1
        if self.asking == 1:
            await self.move(Status.INPUT_REQUIRED)
        try:
            yield
        finally:
            self.asking -= 1
            if self.asking == 0:
                with anyio.CancelScope(shield=True):
                    await self.move(Status.WORKING)

    async def move(self, to: Status) -> None:
        """The task to `to`, unless it has ended meanwhile (a cancelled task stays cancelled)."""
        assert self.ctx is not None
        await self.engine.change(self.task_id, self.ctx.session, self.peers, moved(to))


class UtilityContext(TaskContext):
    """A 2025-11-25 task leg's Context: progress on the creating request's token, logs and asks on
    `session` (the client's session, for as long as the leg runs), asks timing out after `timeout`."""

    __slots__ = ("last_progress", "token")

    def __init__(self, base: Context, leg: Leg, session: Session, asker: UtilityAsker) -> None:
        super().__init__(base, leg, asker, session)
        asker.ctx = self
        token = base.meta.get("progressToken")
        self.token = token if isinstance(token, str | int) and not isinstance(token, bool) else None
        self.last_progress: float | None = None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        record = self.leg.record
        if self.token is None or record is None or record.cancel_requested or record.status.terminal:
            return
        if self.last_progress is not None and progress <= self.last_progress:
            raise LocalError(f"progress must increase: {progress} after {self.last_progress}")
        self.last_progress = progress
        params = related(record.task_id, progress_params(self.token, progress, total, message))
        await self.session.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        note = self.session.connection.log(level, data, logger)  # at the session's level
        if note is not None and self.leg.record is not None:
            note["params"] = related(self.leg.record.task_id, note["params"])
        await self.session.send_message(note)


class UtilityTasks(TaskDialect):
    def check(self, ctx: Context) -> None:
        return  # every request of the era may ask for its tasks

    def owner(self, ctx: Context) -> str | None:
        """Without an access token, the request's session (tasks/list returns only the requestor's
        tasks), else as in every era."""
        if (ctx.origin is None or ctx.origin.principal is None) and ctx.session_id is not None:
            return f"session:{ctx.session_id}"
        return super().owner(ctx)

    def present(self, record: TaskRecord) -> JSON:
        return utility_task(record.fields())

    def cancelled(self, record: TaskRecord, changed: bool) -> JSON:
        if not changed:  # "MUST" be -32602
            raise InvalidParams(f"Invalid params: task {record.task_id!r} has already ended")
        return utility_task(record.fields())

    async def call(
        self, services: Services, tool: Tool, arguments: JSON | None, ctx: Context, params: JSON
    ) -> JSON:
        """tools/call with `task`: CreateTaskResult `{task}` at once. A tool that forbids tasks refuses
        one, a tool that requires one refuses a call without (-32601)."""
        task = params.get("task")
        if task is None and tool.task != "required":
            return await super().call(services, tool, arguments, ctx, params)
        if tool.task == "forbidden":
            raise MethodNotFound(f"Tool {tool.name!r} does not run as a task")
        if task is None:
            raise MethodNotFound(f"Tool {tool.name!r} runs only as a task: add `task` to the call")
        ttl = task.get("ttl") if isinstance(task, dict) else None
        if not isinstance(task, dict) or (ttl is not None and (not isinstance(ttl, int) or ttl < 1)):
            raise InvalidParams("Invalid params: task must be an object with a positive ttl")
        if not isinstance(ctx.asker, SessionAsker):  # every handshake-era request has one
            raise MCPError(INTERNAL_ERROR, "Internal error: a 2025-11-25 task needs the session")
        engine, base = services.tasks, services.tasks.ttl_for(ctx)
        ttl_ms = min(ttl, base) if ttl is not None else base  # capped, and reported
        record = await engine.create(tool, arguments, ctx, self.owner(ctx), {}, ttl_ms)
        leg = Leg(record=record)
        leg.created.set()
        leg.escalated.set()
        timeout = ctx.asker.timeout
        leg.runner = spawn_detached(lambda: self._run(services, leg, tool, arguments, ctx, timeout))
        engine.legs[record.task_id] = leg
        return {"task": utility_task(record.fields())}

    async def _run(
        self,
        services: Services,
        leg: Leg,
        tool: Tool,
        arguments: JSON | None,
        ctx: Context,
        timeout: float | None,
    ) -> None:
        """A leg talking to the client on a session that lasts as long as it runs (the request's own
        ends with the request, on a cluster's worker)."""
        engine = services.tasks
        assert leg.record is not None
        asking = UtilityAsker(leg.record.task_id, engine, services.peers, timeout)
        async with engine.workers.outliving(ctx.session) as session:
            task_ctx = UtilityContext(ctx, leg, session, asking)
            await engine.run(leg, tool, arguments, task_ctx, services.registry.mask_errors, services.peers)

    async def result(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/result: once the task ends, exactly its result (tagged with the related task) or its
        error."""
        record = await self.find(services, ctx, params)
        record = await services.tasks.ended(record, ctx.session, services.peers)
        return final_outcome(record.task_id, record.status, record.result, record.error)

    async def listing(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/list: the caller's own tasks, 100 a page."""
        tasks = await services.tasks.store.owned(self.owner(ctx))
        start, stop, next_cursor = page(len(tasks), params.get("cursor"), _LIST_PAGE)
        listed: JSON = {"tasks": [utility_task(r.fields()) for r in tasks[start:stop]]}
        return listed | ({"nextCursor": next_cursor} if next_cursor else {})
