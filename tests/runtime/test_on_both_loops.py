"""The runtime and the transports above it on both event loops anyio runs: asyncio takes the native fast
paths (bare tasks, loop futures, loop timers), trio the anyio ones. Each test runs on both."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson
import pytest

from mcpkit import Context, Server
from mcpkit.runtime.flag import Flag
from mcpkit.runtime.mailbox import Mailbox
from mcpkit.testing import connect
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def shop() -> Server:
    server = Server("loops")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def slow(ctx: Context) -> str:
        await anyio.sleep(30)
        return "never"

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("name?", schema)
        return f"hi {(answer.content or {}).get('name')}"

    return server


async def test_a_mailbox_hands_items_over_in_order_and_ends() -> None:
    box = Mailbox[int](2)
    got: list[int] = []

    async def read() -> None:
        async for item in box:
            got.append(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        for item in range(5):  # more than the limit: writers wait for the reader
            assert await box.put(item)
        box.close()
    assert got == [0, 1, 2, 3, 4]
    assert not await box.put(9)


async def test_a_flag_wakes_its_waiter() -> None:
    flag = Flag()
    woke: list[bool] = []

    async def wait() -> None:
        await flag.wait()
        woke.append(flag.is_set())

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await anyio.sleep(0.01)
        assert woke == []
        flag.set()
    assert woke == [True]


async def test_in_memory_calls_elicitation_and_cancellation() -> None:
    async def elicit(_params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(shop(), elicitation=elicit) as client:
        added = await client.call_tool("add", {"a": 2, "b": 3})
        asked = await client.call_tool("ask", {})
        with anyio.move_on_after(0.2) as gave_up:
            await client.call_tool("slow", {})
        after = await client.call_tool("add", {"a": 1, "b": 1})  # the session still serves
    assert added["structuredContent"] == {"result": 5}
    assert asked["content"][0]["text"] == "hi Ada"
    assert gave_up.cancelled_caught
    assert after["structuredContent"] == {"result": 2}


async def test_streamable_http_without_lifespan_answers() -> None:
    app = StreamableHTTPApp(shop())
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 4, "b": 5}},
    }
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            opened = await http.post("/mcp", content=orjson.dumps(init), headers=HEADERS)
            session = {
                **HEADERS,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            noted = await http.post("/mcp", content=orjson.dumps(note), headers=session)
            called = await http.post("/mcp", content=orjson.dumps(call), headers=session)
    finally:
        await app.aclose()
    assert opened.status_code == 200 and noted.status_code == 202
    assert called.status_code == 200
    assert b'"structuredContent":{"result":9}' in called.content
