"""Plain `def` tools run on worker threads: a slow one never stalls the session (other calls, pings,
cancellation), a cancelled one is answered as cancelled and its late result dropped; on asyncio and trio.
Slow tools block on threading events the test releases; nothing here waits on a clock."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.from_thread
import orjson
import pytest

from mcpkit import Context, Server
from mcpkit.runtime.stream import MemoryStream, Outgoing, memory_pair
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio

JSON = dict[str, Any]
SEEN: ContextVar[str] = ContextVar("seen", default="unset")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Gate:
    """Slow tools wait on `release`; `inside` counts those that got a thread, `finished` those that ended."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self.inside = 0

    def enter(self) -> None:
        with self._lock:
            self.inside += 1
        self.release.wait(30)
        self.finished.set()

    async def until(self, condition: Callable[[], bool]) -> None:
        with anyio.fail_after(10):
            while not condition():
                await anyio.sleep(0.001)


def shop(gate: Gate, **options: Any) -> Server:
    server = Server("sync", **options)

    @server.tool()
    def slow() -> str:
        gate.enter()
        return "slow"

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def after_slow() -> bool:
        return gate.finished.is_set()

    @server.tool()
    async def hello() -> str:
        return "hello"

    @server.tool()
    def who(ctx: Context) -> str:
        # the request's context, a context variable its middleware set, and the loop through anyio
        anyio.from_thread.run(ctx.info, "from a thread")
        return f"{ctx.client_info['name']} {SEEN.get()}"

    async def mark(ctx: Context, method: str, params: JSON, call_next: Any) -> JSON:
        SEEN.set("marked")
        result: JSON = await call_next(params)
        return result

    server.middleware.add(mark, methods={"tools/call"})
    return server


async def test_a_slow_sync_tool_stalls_no_other_call_nor_ping() -> None:
    gate = Gate()
    answers: list[JSON] = []
    async with connect(shop(gate)) as client, anyio.create_task_group() as tg:

        async def slow() -> None:
            answers.append(await client.call_tool("slow", {}))

        for _ in range(3):
            tg.start_soon(slow)
        await gate.until(lambda: gate.inside == 3)  # three slow calls on threads at once
        await client.ping()
        added = await client.call_tool("add", {"a": 2, "b": 3})
        hello = await client.call_tool("hello", {})
        assert answers == []  # all of that while the slow calls still block
        gate.release.set()
    assert added["structuredContent"] == {"result": 5}
    assert hello["content"][0]["text"] == "hello"
    assert [a["content"][0]["text"] for a in answers] == ["slow"] * 3


async def test_a_sync_tool_has_its_context_the_middlewares_context_vars_and_the_loop() -> None:
    notes: list[JSON] = []

    async def on_log(params: JSON) -> None:
        notes.append(params)

    async with connect(shop(Gate()), on_log=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("who", {})
    assert result["content"][0]["text"] == "mcpkit marked"
    assert [n["data"] for n in notes] == ["from a thread"]


class Raw:
    """A 2025-06-18 client end that writes raw messages and reads every message the server sends."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream

    async def send(self, message: JSON) -> None:
        await self.stream.send(Outgoing(orjson.dumps({"jsonrpc": "2.0", **message})))

    async def next(self) -> JSON:
        with anyio.fail_after(10):
            data = await self.stream.receive()
        assert isinstance(data, bytes)
        message: JSON = orjson.loads(data)
        return message


@asynccontextmanager
async def raw_session(server: Server) -> AsyncIterator[Raw]:
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        raw = Raw(client_end)
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "r", "version": "1"},
        }
        await raw.send({"id": 0, "method": "initialize", "params": hello})
        assert "result" in await raw.next()
        await raw.send({"method": "notifications/initialized"})
        yield raw
        await client_end.aclose()
        tg.cancel_scope.cancel()


async def test_a_cancelled_sync_call_gets_no_answer_and_its_late_result_is_dropped() -> None:
    gate = Gate()
    async with raw_session(shop(gate)) as raw:
        await raw.send({"id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {}}})
        await gate.until(lambda: gate.inside == 1)
        await raw.send({"method": "notifications/cancelled", "params": {"requestId": 1}})
        await raw.send({"id": 2, "method": "ping"})
        assert await raw.next() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        gate.release.set()  # the abandoned thread returns; what it returns goes nowhere
        await gate.until(gate.finished.is_set)
        await raw.send(
            {"id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}}
        )
        answer = await raw.next()
    assert answer["id"] == 3 and answer["result"]["structuredContent"] == {"result": 2}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio: anyio's threads, which free the slot at once
async def test_a_cancelled_call_still_holds_its_thread_of_the_sessions_share() -> None:
    gate = Gate()
    async with raw_session(shop(gate, max_worker_threads=1)) as raw:
        await raw.send({"id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {}}})
        await gate.until(lambda: gate.inside == 1)
        await raw.send({"method": "notifications/cancelled", "params": {"requestId": 1}})
        await raw.send({"id": 2, "method": "tools/call", "params": {"name": "after_slow", "arguments": {}}})
        for rid in range(3, 53):  # the session answers; the sync call waits for the thread all along
            await raw.send({"id": rid, "method": "ping"})
            assert (await raw.next())["id"] == rid
        gate.release.set()
        answer = await raw.next()
    assert answer["id"] == 2 and answer["result"]["structuredContent"] == {"result": True}
