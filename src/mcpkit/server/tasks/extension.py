"""Tasks in the 2026-07-28 era: the extension `io.modelcontextprotocol/tasks`, declared by the client on
each request.

A tool registered with `task=True` (optional) or `task="required"` becomes a task as soon as it is
called by a client that declared the extension on the request. With `ask_first=True` it runs inside
the request first: its asks are ordinary input-required rounds (SEP-2663: resolve MRTR before the task
exists), and it becomes a task when it calls `await ctx.as_task()`. Its later asks park the task in
input_required; tasks/update brings the answers and starts the next leg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, InvalidParams, MCPError, error_object
from ...protocol.jsonrpc import JSON
from ...protocol.tasks import Status, client_supports, created_result, detailed, needs_extension
from ..context import Context
from ..round_trip import RoundTrip
from .changes import answered, settled
from .dialect import TaskDialect
from .legs import Failed, Leg, TaskContext, answer_of, either
from .store import TaskRecord

if TYPE_CHECKING:
    from ..services import Services
    from ..tools import Tool

__all__ = ["ExtensionTasks"]


class ExtensionTasks(TaskDialect):
    def check(self, ctx: Context) -> None:
        if not client_supports(ctx.client_capabilities):
            raise needs_extension()

    def present(self, record: TaskRecord) -> JSON:
        return detailed(
            record.fields(), result=record.result, error=record.error, input_requests=record.input_requests
        )

    async def call(
        self, services: Services, tool: Tool, arguments: JSON | None, ctx: Context, params: JSON
    ) -> JSON:
        """A task-capable tool becomes a task for a client with the extension (at once, or at its
        `ctx.as_task()`); without the extension it is a plain call, unless the tool requires a task."""
        if tool.task == "forbidden" or not client_supports(ctx.client_capabilities):
            if tool.task == "required":
                raise needs_extension()
            return await super().call(services, tool, arguments, ctx, params)
        asker = ctx.asker
        if not isinstance(asker, RoundTrip):  # every stateless tools/call has one
            raise MCPError(INTERNAL_ERROR, "Internal error: a task needs the request's round trip")
        engine, owner, ttl = services.tasks, self.owner(ctx), services.tasks.ttl_for(ctx)
        leg = Leg()
        if not tool.task_ask_first:
            leg.record = await engine.create(tool, arguments, ctx, owner, asker.answers, ttl)
            leg.created.set()
            leg.escalated.set()
        mask = services.registry.mask_errors
        engine.start(leg, tool, arguments, TaskContext(ctx, leg, asker), mask, services.peers)
        if leg.record is None:
            try:
                await either(leg.done, leg.escalated)
                if not leg.escalated.is_set():  # it ended inside the request: no task
                    return answer_of(leg.outcome, asker)
                leg.record = await engine.create(tool, arguments, ctx, owner, asker.answers, ttl)
            except BaseException:
                if leg.runner is not None:
                    await leg.runner.aclose()
                raise
            leg.created.set()
        engine.legs[leg.record.task_id] = leg
        return created_result(leg.record.fields())

    async def update(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """Answers for outstanding requests; unknown or answered keys are ignored (SEP-2663). Once
        none is outstanding the task works again, in a new leg."""
        record = await self.find(services, ctx, params)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise InvalidParams("Invalid params: inputResponses must be an object")
        engine = services.tasks
        change = answered(responses, engine.workers.worker)
        found, changed = await engine.change(record.task_id, ctx.session, services.peers, change)
        if found is not None and changed and found.status is Status.WORKING:  # this update resumed it
            await self._resume(services, found, ctx)
        return {}

    async def _resume(self, services: Services, record: TaskRecord, ctx: Context) -> None:
        """The task's next leg, with every answer so far."""
        leg = Leg(record=record, number=record.leg)
        leg.created.set()
        leg.escalated.set()
        tool = services.registry.tools.get(record.tool)
        if tool is None:
            gone = Failed(error_object(INVALID_PARAMS, f"Tool {record.tool!r} is gone"))
            await services.tasks.change(
                record.task_id, ctx.session, services.peers, settled(leg.number, gone)
            )
            return
        sealer = services.sealer
        asker = RoundTrip(record.answers, "tools/call", {"name": record.tool}, record.client, sealer)
        task_ctx, mask = TaskContext(ctx, leg, asker), services.registry.mask_errors
        services.tasks.legs[record.task_id] = leg
        services.tasks.start(leg, tool, record.arguments, task_ctx, mask, services.peers)
