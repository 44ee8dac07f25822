"""mcpkit's Streamable HTTP client against mcpkit's app, on asyncio and on trio, in both eras: on a real
server (uvicorn, hypercorn) and driving the app in this process without lifespan. What crosses: calls, the
server's own requests answered by the client (elicitation, sampling), a caller's cancellation, change
notifications."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from test_http_server import running

from in_process import client_in_process
from mcpkit import Context, Server
from mcpkit.client import Client, connect_http
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

JSON = dict[str, Any]


def make_server(started: anyio.Event) -> Server:
    server = Server("client-app")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("name?", schema, key="who")
        return f"hi {(answer.content or {}).get('name')}"

    @server.tool()
    async def muse(ctx: Context) -> str:
        sampled = await ctx.sample("a word?", key="word")
        return f"mused {sampled['content']['text']}"

    @server.tool()
    async def wait() -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    return server


async def elicit(_params: JSON) -> JSON:
    return {"action": "accept", "content": {"name": "Ada"}}


async def sample(_params: JSON) -> JSON:
    return {"role": "assistant", "content": {"type": "text", "text": "tea"}, "model": "m"}


@asynccontextmanager
async def client_to(hosting: str, server: Server, era: str) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"era": era, "timeout": 10, "elicitation": elicit, "sampling": sample}
    app = StreamableHTTPApp(server)
    with anyio.fail_after(20):
        if hosting == "in-process":
            async with client_in_process(app, **options) as client:
                yield client
            return
        async with running(app) as url, connect_http(url, **options) as client:
            yield client


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_calls_and_the_servers_own_requests_are_answered(hosting: str, era: str) -> None:
    async with client_to(hosting, make_server(anyio.Event()), era) as client:
        assert client.stateless == (era == "modern")
        added = await client.call_tool("add", {"a": 2, "b": 3})
        asked = await client.call_tool("ask", {})
        mused = await client.call_tool("muse", {})
    assert added["structuredContent"] == {"result": 5}
    assert asked["content"][0]["text"] == "hi Ada"
    assert mused["content"][0]["text"] == "mused tea"


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_a_call_the_caller_gives_up_on_is_cancelled_and_the_client_goes_on(
    hosting: str, era: str
) -> None:
    started = anyio.Event()
    async with client_to(hosting, make_server(started), era) as client:
        async with anyio.create_task_group() as tg:

            async def give_up() -> None:
                await started.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(give_up)
            await client.call_tool("wait", {})
            pytest.fail("the call returned")
        after = await client.call_tool("add", {"a": 1, "b": 1})
    assert tg.cancel_scope.cancelled_caught
    assert after["structuredContent"] == {"result": 2}


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_change_notifications_reach_a_listener(hosting: str, era: str) -> None:
    server = make_server(anyio.Event())
    async with client_to(hosting, server, era) as client, client.listen(tools=True) as subscription:
        await client.list_tools()
        server.add_tool(lambda: "x", name="late")
        with anyio.fail_after(5):
            method, _params = await subscription.__anext__()
    assert method == "notifications/tools/list_changed"
