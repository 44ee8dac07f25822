"""The fixtures of the conformance suite's tasks-* scenarios (the 2026-07-28 tasks extension, SEP-2663):
names, arguments and behaviour as the scenarios ask for them."""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from mcpkit import Context, Server
from mcpkit.protocol.errors import INTERNAL_ERROR, MCPError

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def add_task_tools(server: Server) -> None:
    @server.tool()
    def greet(name: str) -> str:
        """Sync only: never a task."""
        return f"Hello, {name}!"

    @server.tool(task=True)
    async def slow_compute(seconds: float, label: str = "") -> str:
        """Sleeps `seconds`, then answers; cancelled if tasks/cancel comes first."""
        await anyio.sleep(seconds)
        return f"computed {label} after {seconds} s"

    @server.tool(task="required")
    async def failing_job() -> str:
        """Always fails as a tool (isError), after about a second."""
        await anyio.sleep(1)
        raise ValueError("the job failed")

    @server.tool(task=True)
    async def protocol_error_job() -> str:
        """Fails with a protocol-level error: the task is failed, with that error."""
        await anyio.sleep(0.2)
        raise MCPError(INTERNAL_ERROR, "Internal error: the job crashed")

    @server.tool(task=True)
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Asks for confirmation inside the task, then deletes (pretends to)."""
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM)
        return (
            f"Deleted {filename}" if answer.accepted and (answer.content or {}).get("confirm") else "Kept it"
        )

    @server.tool(task=True)
    async def multi_input(ctx: Context) -> str:
        """Two questions at once: both keys are outstanding together."""
        answers = await ctx.request_input(
            {
                "first": {"method": "elicitation/create", "params": _form("First name?", NAME)},
                "second": {"method": "elicitation/create", "params": _form("Confirm?", CONFIRM)},
            }
        )
        return f"got {sorted(answers)}"

    @server.tool(task="required", ask_first=True)
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks the user's name inside the request, then works on as a task and greets them."""
        answer = await ctx.elicit("What is your name?", NAME)
        name = (answer.content or {}).get("name", "") if answer.accepted else "nobody"
        await ctx.as_task()
        await anyio.sleep(0.3)
        return f"Hello, {name}!"


def _form(message: str, schema: Mapping[str, object]) -> dict[str, object]:
    return {"mode": "form", "message": message, "requestedSchema": schema}
