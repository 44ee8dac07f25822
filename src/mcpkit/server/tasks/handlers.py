"""The server's answers to tasks/get, tasks/update, tasks/cancel, tasks/result and tasks/list, and to a
tools/call that may become a task: each chooses the era's dialect once (`dialect_for`) and asks it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...protocol.jsonrpc import JSON
from ...protocol.lifecycle import Negotiated
from ...protocol.versions import Feature, has
from ..context import Context
from .dialect import TaskDialect
from .extension import ExtensionTasks
from .utility import UtilityTasks

if TYPE_CHECKING:
    from ..services import Services
    from ..tools import Tool

__all__ = [
    "call_tool_task",
    "cancel_task",
    "dialect_for",
    "followed_tasks",
    "get_task",
    "list_tasks",
    "task_result",
    "update_task",
]

_EXTENSION, _UTILITY, _NONE = ExtensionTasks(), UtilityTasks(), TaskDialect()


def dialect_for(negotiated: Negotiated) -> TaskDialect:
    """The tasks of the era `negotiated` is of: the extension (2026-07-28), the utility (2025-11-25),
    or none (before)."""
    if negotiated.stateless:
        return _EXTENSION
    return _UTILITY if has(negotiated.version, Feature.TASKS) else _NONE


async def call_tool_task(
    services: Services, ctx: Context, tool: Tool, arguments: JSON | None, params: JSON
) -> JSON:
    """tools/call of a tool that may run as a task, or that is asked to."""
    return await dialect_for(ctx.negotiated).call(services, tool, arguments, ctx, params)


async def get_task(services: Services, ctx: Context, params: JSON) -> JSON:
    return await dialect_for(ctx.negotiated).get(services, ctx, params)


async def update_task(services: Services, ctx: Context, params: JSON) -> JSON:
    return await dialect_for(ctx.negotiated).update(services, ctx, params)


async def cancel_task(services: Services, ctx: Context, params: JSON) -> JSON:
    return await dialect_for(ctx.negotiated).cancel(services, ctx, params)


async def task_result(services: Services, ctx: Context, params: JSON) -> JSON:
    return await dialect_for(ctx.negotiated).result(services, ctx, params)


async def list_tasks(services: Services, ctx: Context, params: JSON) -> JSON:
    return await dialect_for(ctx.negotiated).listing(services, ctx, params)


async def followed_tasks(services: Services, ctx: Context, task_ids: Any) -> list[JSON]:
    """subscriptions/listen's `taskIds`: the DetailedTask of each of the caller's tasks it follows."""
    return await dialect_for(ctx.negotiated).followed(services, ctx, task_ids)
