"""A stdio server built with the official MCP Python SDK (mcp 2.x `MCPServer`), for interop tests.

Run as `python tests/interop/sdk_server.py`; mcpkit's client talks to it in test_official_sdk.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

# The SDK marks sampling/roots/logging deprecated for 2026-07-28; they are live at 2025-11-25.
warnings.simplefilter("ignore")

mcp = MCPServer(
    "sdk-interop-server", version="9.9.9", instructions="An official-SDK server for mcpkit tests."
)


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


class Sum(BaseModel):
    result: int


@mcp.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers (structured output)."""
    return Sum(result=a + b)


@mcp.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Sample the client's LLM and return its text."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=50,
        system_prompt="Be brief.",
    )
    content = result.content
    return f"model={result.model} text={getattr(content, 'text', '')}"


class Booking(BaseModel):
    guests: int = Field(description="How many people")
    confirm: bool = Field(description="Confirm the booking")


@mcp.tool()
async def book(restaurant: str, ctx: Context) -> str:
    """Elicit a booking from the user."""
    answer = await ctx.elicit(f"Book {restaurant}?", Booking)
    if answer.action == "accept":
        return f"accepted guests={answer.data.guests} confirm={answer.data.confirm}"
    return f"not booked: {answer.action}"


@mcp.tool()
async def book_later(restaurant: str, delay: float, ctx: Context) -> str:
    """Elicit a booking after `delay` seconds (another client's call may start meanwhile)."""
    await anyio.sleep(delay)
    return await book(restaurant, ctx)


@mcp.tool()
async def hold(seconds: float) -> str:
    """Stay in flight for `seconds`."""
    await anyio.sleep(seconds)
    return "held"


# MCPServer declares the `logging` capability only when a logging/setLevel handler exists, and
# leaves filtering to that handler (handshake versions): record the level and filter in `chatty`.
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
min_level = {"level": "debug"}


async def set_level(ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    min_level["level"] = params.level
    return types.EmptyResult()


mcp._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Log at three levels (those below the level set by logging/setLevel are skipped)."""
    floor = LEVELS.index(min_level["level"])
    for level, send in (("debug", ctx.debug), ("info", ctx.info), ("error", ctx.error)):
        if LEVELS.index(level) >= floor:
            await send(f"{level} line", logger_name="sdk")
    return "logged"


@mcp.tool()
async def countdown(steps: int, ctx: Context) -> str:
    """Report progress `steps` times."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await anyio.sleep(0.01)
    return f"done {steps}"


@mcp.tool()
async def roots(ctx: Context) -> list[str]:
    """The client's root URIs."""
    result = await ctx.session.list_roots()
    return [str(root.uri) for root in result.roots]


@mcp.tool()
async def confirm(ctx: Context) -> str | types.InputRequiredResult:
    """2026-07-28 multi round-trip, written against the SDK's own input-required API."""
    answers = ctx.input_responses or {}
    if "ok" not in answers:
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        form = types.ElicitRequestFormParams(message="OK?", requested_schema=schema)
        ask = types.ElicitRequest(params=form)
        return types.InputRequiredResult(input_requests={"ok": ask}, request_state="sdk-state-1")
    answer = answers["ok"]
    action, content = getattr(answer, "action", "?"), getattr(answer, "content", None)
    return f"state={ctx.request_state} action={action} content={content}"


@mcp.tool()
def explode() -> str:
    """Always raises."""
    raise ValueError("kaboom")


@mcp.resource("sdk://static", name="static", mime_type="text/plain")
def static_resource() -> str:
    return "static contents"


@mcp.resource("sdk://users/{user_id}", name="user", mime_type="text/plain")
def user_resource(user_id: str) -> str:
    return f"user {user_id}"


@mcp.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


async def complete(
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: types.CompletionArgument,
    context: types.CompletionContext | None,
) -> types.Completion | None:
    if isinstance(ref, types.PromptReference) and ref.name == "greet" and argument.name == "name":
        names = ["alice", "albert", "bob"]
        return types.Completion(values=[n for n in names if n.startswith(argument.value)])
    return None


# Registered by a call, not as a decorator: the SDK leaves MCPServer.completion unannotated, and as a
# decorator it would make `complete` untyped too.
mcp.completion()(complete)  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    import os
    import sys
    import time

    time.sleep(float(os.environ.get("SDK_SERVER_START_DELAY", "0")))  # a slow start, for the era probe

    if "--http" in sys.argv:  # Streamable HTTP on 127.0.0.1:<port>/mcp, for the HTTP interop tests
        port = int(sys.argv[sys.argv.index("--port") + 1])
        json_mode = "--json" in sys.argv
        mcp.run("streamable-http", host="127.0.0.1", port=port, json_response=json_mode)
    else:
        mcp.run()
