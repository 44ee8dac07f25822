"""What differs between the eras' tasks, asked of one object chosen once per request (handlers.py
`dialect_for`): who owns a task, whether the era has tasks at all, how a task is presented, what a
cancel answers, and which requests exist. This base is an era without tasks (before 2025-11-25):
tools/call is a plain call and every tasks/* method is -32601. The eras with tasks are `ExtensionTasks`
(2026-07-28, extension.py) and `UtilityTasks` (2025-11-25, utility.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...protocol.errors import InvalidParams, MethodNotFound
from ...protocol.jsonrpc import JSON
from ..context import Context
from .changes import cancelled
from .store import TaskRecord

if TYPE_CHECKING:
    from ..services import Services
    from ..tools import Tool

__all__ = ["TaskDialect"]


class TaskDialect:
    """The tasks of an era without them; the eras with tasks override what differs."""

    def check(self, ctx: Context) -> None:
        """Refuse a tasks/* request this era (or this request's client) does not have."""
        version = ctx.negotiated.version
        raise MethodNotFound(f"Method not found: tasks came with 2025-11-25, not {version}")

    def owner(self, ctx: Context) -> str | None:
        """Whose tasks a request sees: its access token's principal; else the caller its transport
        names (so one anonymous caller's tasks do not count against another's cap); else nobody."""
        origin = ctx.origin
        if origin is not None and origin.principal is not None:
            return origin.principal
        return f"anonymous {origin.caller}" if origin is not None and origin.caller else None

    def present(self, record: TaskRecord) -> JSON:
        """The task as tasks/get answers it."""
        return record.fields()

    def cancelled(self, record: TaskRecord, changed: bool) -> JSON:
        """What tasks/cancel answers: the task as it is now (`changed`: it was cancelled by this call)."""
        return {}

    async def call(
        self, services: Services, tool: Tool, arguments: JSON | None, ctx: Context, params: JSON
    ) -> JSON:
        """tools/call of a tool that may run as a task (or of any tool, with `task` in `params`)."""
        mask = services.registry.mask_errors
        result: JSON = await tool.call(arguments, ctx, ctx.negotiated.version, mask_errors=mask)
        return result

    async def find(self, services: Services, ctx: Context, params: JSON) -> TaskRecord:
        """The caller's task `params` names (engine.py `find`), once this era has it."""
        self.check(ctx)
        return await services.tasks.find(params, self.owner(ctx))

    async def get(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/get."""
        record = await self.find(services, ctx, params)
        record = await services.tasks.unless_lost(record, ctx.session, services.peers)
        return self.present(record)

    async def cancel(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/cancel: cooperative; the running leg, wherever it runs, is cancelled with the task."""
        task_id = (await self.find(services, ctx, params)).task_id
        record, changed = await services.tasks.change(task_id, ctx.session, services.peers, cancelled)
        if record is None:
            raise InvalidParams(f"Invalid params: no task {task_id!r}")
        if changed:
            await services.tasks.stop_leg(record)
        return self.cancelled(record, changed)

    async def update(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/update (2026-07-28)."""
        raise MethodNotFound("Method not found: tasks/update is a 2026-07-28 method")

    async def result(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/result (2025-11-25)."""
        raise MethodNotFound("Method not found: tasks/result is a 2025-11-25 method")

    async def listing(self, services: Services, ctx: Context, params: JSON) -> JSON:
        """tasks/list (2025-11-25)."""
        raise MethodNotFound("Method not found: tasks/list is a 2025-11-25 method")

    async def followed(self, services: Services, ctx: Context, task_ids: Any) -> list[JSON]:
        """subscriptions/listen's `taskIds` (2026-07-28)."""
        self.check(ctx)
        return await services.tasks.followed(ctx, task_ids, self.owner(ctx))
