"""Tasks on the server (2026-07-28 extension `io.modelcontextprotocol/tasks`): a tools/call that becomes
a durable record whose work runs in legs, outside the request.

A leg runs the tool from the top with the answers gathered so far (the multi round-trip model): an ask
with no answer ends the leg and parks the task in input_required with that request outstanding;
tasks/update brings answers, and once none is outstanding the next leg starts. So no leg ever waits on
a client, and everything but a running leg lives in the TaskStore.

A tool registered with `task=True` (optional) or `task="required"` becomes a task as soon as it is
called by a client that declared the extension on the request. With `ask_first=True` it runs inside
the request first: its asks are ordinary input-required rounds (SEP-2663: resolve MRTR before the task
exists), and it becomes a task when it calls `await ctx.as_task()`.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    SERVER_BUSY,
    MCPError,
    error_object,
    to_wire_error,
)
from ..protocol.pagination import page
from ..protocol.tasks import (
    Status,
    client_supports,
    created_result,
    detailed,
    final_outcome,
    needs_extension,
    task_id_of,
    utility_task,
)
from ..protocol.versions import Feature, has
from ..runtime._native import spawn_detached
from .asking import SessionAsker
from .context import Context
from .round_trip import InputRequired, RoundTrip
from .task_changes import answered, cancelled, lost, running, settled
from .task_counts import StatusCounts
from .task_legs import Leg, TaskContext, answer_of, either, fields_of, task_support
from .task_notices import task_note, tell
from .task_session import UtilityContext
from .task_store import Change, InMemoryTaskStore, TaskRecord, TaskStore
from .task_workers import OneProcess, TaskCluster

if TYPE_CHECKING:
    from .tools import Tool

__all__ = ["TaskContext", "TaskEngine", "task_support"]  # the last two: task_legs

log = logging.getLogger("mcpkit")
_LIST_PAGE = 100  # tasks a tasks/list page holds
_LOST_EVERY = 10  # a blocking tasks/result checks the leg's worker every this many polls of 50 ms

JSON = dict[str, Any]


class TaskEngine:
    """Creates, runs and answers for tasks; `store` keeps them (InMemoryTaskStore by default).

    `ttl_ms`: how long a task is kept after its creation (its `ttlMs`); `anonymous_ttl_ms` (lower):
    that of a task no access token authorized. `poll_interval_ms`: the polling interval suggested to
    clients; `max_live_per_owner`: how many unfinished tasks one principal, or one unauthenticated
    caller (owner_of), may hold: past it a call is refused with -32010. `workers`: where legs run, this
    process alone by default (task_workers.py); a cluster's engine is `RedisBackplane.tasks()`.
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        workers: TaskCluster | None = None,
        ttl_ms: int = 3_600_000,
        anonymous_ttl_ms: int = 600_000,
        poll_interval_ms: int = 500,
        max_live_per_owner: int = 100,
    ) -> None:
        if min(ttl_ms, anonymous_ttl_ms, poll_interval_ms, max_live_per_owner) < 1:
            raise ValueError("task ttl, poll interval and cap must be positive")
        self.anonymous_ttl_ms = min(anonymous_ttl_ms, ttl_ms)
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.ttl_ms, self.poll_interval_ms, self.max_live = ttl_ms, poll_interval_ms, max_live_per_owner
        self._legs: dict[str, Leg] = {}  # the legs running in this process, by task id
        self.workers: TaskCluster = workers if workers is not None else OneProcess()
        self.counts = StatusCounts()  # `counts.measure(metrics)` reports them

    def cancel_here(self, task_id: str) -> None:
        """Another worker cancelled a task whose leg may run here."""
        leg = self._legs.pop(task_id, None)
        if leg is not None and leg.runner is not None:
            leg.runner.cancel()

    # ---- tools/call --------------------------------------------------------------------------

    async def call(self, tool: Tool, arguments: JSON | None, ctx: Context, mask_errors: bool) -> JSON:
        """tools/call of a task-capable tool in the stateless era."""
        if not client_supports(ctx.client_capabilities):
            if tool.task == "required":
                raise needs_extension()
            return await tool.call(arguments, ctx, ctx.negotiated.version, mask_errors=mask_errors)
        asker = ctx.asker
        if not isinstance(asker, RoundTrip):  # every stateless tools/call has one
            raise MCPError(INTERNAL_ERROR, "Internal error: a task needs the request's round trip")
        leg = Leg()
        if not tool.task_ask_first:
            leg.record = await self._create(tool, arguments, ctx, asker.answers, self._ttl_for(ctx))
            leg.created.set()
            leg.escalated.set()
        task_ctx = TaskContext(ctx, leg, asker)
        leg.runner = spawn_detached(lambda: self._run(leg, tool, arguments, task_ctx, mask_errors))
        if leg.record is None:
            try:
                await either(leg.done, leg.escalated)
                if not leg.escalated.is_set():  # it ended inside the request: no task
                    return answer_of(leg.outcome, asker)
                leg.record = await self._create(tool, arguments, ctx, asker.answers, self._ttl_for(ctx))
            except BaseException:
                await leg.runner.aclose()
                raise
            leg.created.set()
        self._legs[leg.record.task_id] = leg
        return created_result(fields_of(leg.record))

    async def _create(
        self, tool: Tool, arguments: JSON | None, ctx: Context, answers: JSON, ttl_ms: int
    ) -> TaskRecord:
        """A new task in the store (durably, before its id is sent); -32010 past the owner's cap or
        when the store is full."""
        record = self._record(tool, arguments, ctx, answers, ttl_ms)
        if not await self.store.create(record, self.max_live):
            raise MCPError(SERVER_BUSY, f"Too many unfinished tasks (at most {self.max_live} per caller)")
        self.counts.entered(record.status)
        return record

    def _ttl_for(self, ctx: Context) -> int:
        """An anonymous caller's tasks are kept for less (`anonymous_ttl_ms`)."""
        return self.ttl_ms if ctx.origin is not None and ctx.origin.principal else self.anonymous_ttl_ms

    def _record(
        self, tool: Tool, arguments: JSON | None, ctx: Context, answers: JSON, ttl_ms: int
    ) -> TaskRecord:
        now = time.time()
        return TaskRecord(
            runner=self.workers.worker,
            task_id=secrets.token_urlsafe(24),  # the id is all a caller needs: unguessable
            owner=owner_of(ctx),
            tool=tool.name,
            arguments=arguments,
            client=ctx.client_capabilities,
            version=ctx.negotiated.version,
            created_at=now,
            updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            answers=dict(answers),
        )

    async def _run(self, leg: Leg, tool: Tool, arguments: JSON | None, ctx: TaskContext, mask: bool) -> None:
        try:
            result = await tool.call(arguments, ctx, ctx.negotiated.version, mask_errors=mask)
            leg.outcome = ("result", result)
        except InputRequired as need:
            leg.outcome = ("input", need)
        except MCPError as exc:
            leg.outcome = ("error", to_wire_error(exc, ctx.negotiated.version))
        except anyio.get_cancelled_exc_class():
            leg.outcome = ("cancelled", None)
            raise
        except Exception as exc:
            log.exception("task leg of %r failed", tool.name)
            leg.outcome = ("error", to_wire_error(exc))
        finally:
            leg.done.set()
            with anyio.CancelScope(shield=True):
                await self._settle(leg, ctx)

    async def _settle(self, leg: Leg, ctx: Context) -> None:
        """Write a finished leg's outcome on its task (a leg that ended before it was one has none)."""
        if leg.record is None:
            return
        await leg.created.wait()
        task_id, number = leg.record.task_id, leg.number
        if self._legs.get(task_id) is leg:
            del self._legs[task_id]
        await self.change(task_id, ctx, settled(number, leg.outcome))

    async def change(self, task_id: str, ctx: Context, change: Change) -> tuple[TaskRecord | None, bool]:
        """Apply `change` to the task in one atomic step of the store and, when it changed, tell
        whoever follows it (task_notices.py): the task as kept, and whether it changed."""

        moved: list[Status] = []  # the status the change entered, if it changed the status

        def stamped(record: TaskRecord) -> bool:
            was = record.status
            if not change(record):
                return False
            record.updated_at = time.time()
            moved[:] = [record.status] if record.status is not was else []
            return True

        record, changed = await self.store.update(task_id, stamped)
        if changed and record is not None:
            for status in moved:
                self.counts.entered(status)
            await tell(record, ctx.session, ctx.server.listeners)
        return record, changed

    # ---- tasks/get, tasks/update, tasks/cancel -----------------------------------------------

    async def find(self, ctx: Context, params: JSON) -> TaskRecord:
        """The task a tasks/* request names: -32021 without the extension, -32602 for an unknown id
        (or another principal's: the same answer, so an id learnt elsewhere reveals nothing)."""
        if ctx.stateless and not client_supports(ctx.client_capabilities):
            raise needs_extension()
        if not ctx.stateless and not has(ctx.negotiated.version, Feature.TASKS):
            raise MCPError(
                METHOD_NOT_FOUND,
                f"Method not found: tasks came with 2025-11-25, not {ctx.negotiated.version}",
            )
        task_id = task_id_of(params)
        record = await self.store.get(task_id)
        owner = owner_of(ctx)
        if record is None or record.owner != owner:
            raise MCPError(INVALID_PARAMS, f"Invalid params: no task {task_id!r}")
        return record

    async def get(self, ctx: Context, params: JSON) -> JSON:
        record = await self._unless_lost(await self.find(ctx, params), ctx)
        if not ctx.stateless:
            return utility_task(fields_of(record))
        return detailed(
            fields_of(record), result=record.result, error=record.error, input_requests=record.input_requests
        )

    async def _unless_lost(self, record: TaskRecord, ctx: Context) -> TaskRecord:
        """The task, failed if its leg runs on a worker that has stopped (it would never end)."""
        runner = record.runner
        if runner is None or runner == self.workers.worker or not running(record):
            return record
        if await self.workers.alive(runner):
            return record
        found, _ = await self.change(record.task_id, ctx, lost(runner, record.leg))
        return found if found is not None else record

    async def update(self, ctx: Context, params: JSON) -> JSON:
        """Answers for outstanding requests; unknown or answered keys are ignored (SEP-2663). Once
        none is outstanding the task works again, in a new leg."""
        record = await self.find(ctx, params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise MCPError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        runner = self.workers.worker
        found, changed = await self.change(record.task_id, ctx, answered(responses, runner))
        if found is not None and changed and found.status is Status.WORKING:  # this update resumed it
            self._resume(found, ctx)
        return {}

    def _resume(self, record: TaskRecord, ctx: Context) -> None:
        tool = ctx.registry.tools.get(record.tool)
        leg = Leg(record=record, number=record.leg)
        leg.created.set()
        leg.escalated.set()
        if tool is None:
            leg.outcome = ("error", error_object(INVALID_PARAMS, f"Tool {record.tool!r} is gone"))
            return
        sealer = ctx.server.state_sealer
        asker = RoundTrip(record.answers, "tools/call", {"name": record.tool}, record.client, sealer)
        task_ctx = TaskContext(ctx, leg, asker)
        mask = ctx.registry.mask_errors
        self._legs[record.task_id] = leg
        leg.runner = spawn_detached(lambda: self._run(leg, tool, record.arguments, task_ctx, mask))

    async def cancel(self, ctx: Context, params: JSON) -> JSON:
        """An empty ack; a terminal task stays as it is (idempotent). Cooperative: the running leg, if it
        runs here, is cancelled, and the task is cancelled."""
        task_id = (await self.find(ctx, params)).task_id
        record, changed = await self.change(task_id, ctx, cancelled)
        if record is None:
            raise MCPError(INVALID_PARAMS, f"Invalid params: no task {task_id!r}")
        if not changed and not ctx.stateless:  # 2025-11-25: MUST be -32602
            raise MCPError(INVALID_PARAMS, f"Invalid params: task {task_id!r} has already ended")
        if not changed:
            return {}
        leg = self._legs.pop(record.task_id, None)
        if leg is not None and leg.runner is not None:
            await leg.runner.aclose()
        elif record.runner not in (None, self.workers.worker):
            await self.workers.cancel_elsewhere(record.task_id)
        return {} if ctx.stateless else utility_task(fields_of(record))

    async def followed(self, ctx: Context, task_ids: Any) -> list[JSON]:
        """subscriptions/listen's `taskIds`: the DetailedTask of each of the caller's tasks named (at
        most `max_live`), the ones its notifications/tasks will follow; -32021 without the extension."""
        if not client_supports(ctx.client_capabilities):
            raise needs_extension()
        if not isinstance(task_ids, list):
            raise MCPError(INVALID_PARAMS, "Invalid params: taskIds must be an array of task ids")
        owner, found = owner_of(ctx), []
        for task_id in task_ids[: self.max_live]:
            record = await self.store.get(task_id) if isinstance(task_id, str) else None
            if record is not None and record.owner == owner:
                found.append(task_note(record))
        return found

    # ---- the 2025-11-25 tasks utility --------------------------------------------------------

    async def augmented(
        self, tool: Tool, arguments: JSON | None, ctx: Context, task: Any, mask_errors: bool
    ) -> JSON:
        """tools/call with `task` (2025-11-25): CreateTaskResult `{task}` at once. A tool that forbids
        tasks refuses one, a tool that requires one refuses a call without (-32601)."""
        if tool.task == "forbidden":
            raise MCPError(METHOD_NOT_FOUND, f"Tool {tool.name!r} does not run as a task")
        if task is None:
            raise MCPError(
                METHOD_NOT_FOUND, f"Tool {tool.name!r} runs only as a task: add `task` to the call"
            )
        ttl = task.get("ttl") if isinstance(task, dict) else None
        if not isinstance(task, dict) or (ttl is not None and (not isinstance(ttl, int) or ttl < 1)):
            raise MCPError(INVALID_PARAMS, "Invalid params: task must be an object with a positive ttl")
        base = self._ttl_for(ctx)
        ttl_ms = min(ttl, base) if ttl is not None else base  # capped, and reported
        record = await self._create(tool, arguments, ctx, {}, ttl_ms)
        leg = Leg(record=record)
        leg.created.set()
        leg.escalated.set()
        if not isinstance(ctx.asker, SessionAsker):  # every handshake-era request has one
            raise MCPError(INTERNAL_ERROR, "Internal error: a 2025-11-25 task needs the session")
        timeout = ctx.asker.timeout
        leg.runner = spawn_detached(
            lambda: self._run_utility(leg, tool, arguments, ctx, timeout, mask_errors)
        )
        self._legs[record.task_id] = leg
        return {"task": utility_task(fields_of(record))}

    async def _run_utility(
        self, leg: Leg, tool: Tool, arguments: JSON | None, ctx: Context, timeout: float | None, mask: bool
    ) -> None:
        """A 2025-11-25 leg, talking to the client on a session that lasts as long as it runs (the
        request's own ends with the request, on a cluster's worker)."""
        async with self.workers.outliving(ctx.session) as session:
            await self._run(leg, tool, arguments, UtilityContext(ctx, leg, session, self, timeout), mask)

    async def result(self, ctx: Context, params: JSON) -> JSON:
        """tasks/result (2025-11-25): once the task ends, exactly its result (tagged with the related
        task) or its error."""
        record, polls = await self.find(ctx, params), 0
        while not record.status.terminal:
            await anyio.sleep(0.05)
            found = await self.store.get(record.task_id)
            if found is None:
                raise MCPError(INVALID_PARAMS, f"Invalid params: task {record.task_id!r} expired")
            polls += 1
            # a leg whose worker died never ends: look at its heartbeat now and then
            record = await self._unless_lost(found, ctx) if polls % _LOST_EVERY == 0 else found
        return final_outcome(record.task_id, record.status, record.result, record.error)

    async def listing(self, ctx: Context, params: JSON) -> JSON:
        """tasks/list (2025-11-25): the caller's own tasks, 100 a page."""
        if not has(ctx.negotiated.version, Feature.TASKS) or ctx.stateless:
            raise MCPError(METHOD_NOT_FOUND, "Method not found: tasks/list is a 2025-11-25 method")
        tasks = await self.store.owned(owner_of(ctx))
        start, stop, next_cursor = page(len(tasks), params.get("cursor"), _LIST_PAGE)
        listed: JSON = {"tasks": [utility_task(fields_of(r)) for r in tasks[start:stop]]}
        return listed | ({"nextCursor": next_cursor} if next_cursor else {})


def owner_of(ctx: Context) -> str | None:
    """Whose tasks a request sees: its access token's principal; without one, in the handshake era, its
    session (2025-11-25 tasks/list returns only the requestor's tasks); else the caller its transport
    names (so one anonymous caller's tasks do not count against another's cap); else nobody."""
    if ctx.origin is not None and ctx.origin.principal is not None:
        return ctx.origin.principal
    if not ctx.stateless and ctx.session_id is not None:
        return f"session:{ctx.session_id}"
    return f"anonymous {ctx.origin.caller}" if ctx.origin is not None and ctx.origin.caller else None
