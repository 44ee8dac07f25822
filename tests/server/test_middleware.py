"""Middleware around a server's requests, in both eras, in memory through real JSON bytes: order,
per-method filters, changing params and results, short-circuits, refusals, and the three shipped ones."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcpkit import Context, Server
from mcpkit.protocol.errors import RemoteError
from mcpkit.server.middleware import Call, ConcurrencyLimit, RateLimit, RequestLog, Timing
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]


def build() -> Server:
    server = Server("mw")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_middleware_runs_in_order_around_the_handler_and_may_change_both_ends(era: JSON) -> None:
    server = build()
    seen: list[str] = []

    async def outer(ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        seen.append(f"outer {method}")
        result = await call_next(params)
        seen.append("outer done")
        return result

    server.middleware.add(outer)  # the first added is the outermost

    @server.middleware.on("tools/call")
    async def doubling(ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        seen.append("doubling")
        arguments = {k: v * 2 for k, v in params["arguments"].items()}
        result = await call_next({**params, "arguments": arguments})
        return {**result, "_meta": {"touched": True}}

    async with connect(server, **era) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        await client.list_tools()
    assert result["structuredContent"] == {"result": 6} and result["_meta"]["touched"] is True
    first = seen.index("outer tools/call")  # the stateless client's server/discover came before
    assert seen[first : first + 3] == ["outer tools/call", "doubling", "outer done"]
    assert "outer tools/list" in seen and seen.count("doubling") == 1  # only around tools/call


async def test_a_middleware_may_answer_alone_or_refuse() -> None:
    server = build()

    @server.middleware.on("tools/call")
    async def gate(ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        if params["name"] == "add" and params["arguments"].get("a") == 0:
            return {"content": [{"type": "text", "text": "answered by the middleware"}]}
        if params["arguments"].get("a") == -1:
            raise RemoteError(-32602, "negative numbers are not welcome")
        return await call_next(params)

    async with connect(server) as client:
        short = await client.call_tool("add", {"a": 0, "b": 2})
        with pytest.raises(RemoteError) as refused:
            await client.call_tool("add", {"a": -1, "b": 2})
    assert short["content"][0]["text"] == "answered by the middleware"
    assert refused.value.code == -32602 and "not welcome" in refused.value.message


async def test_request_log_writes_one_structured_record_per_request(caplog: pytest.LogCaptureFixture) -> None:
    server = build()
    server.middleware.add(RequestLog())
    with caplog.at_level(logging.INFO, logger="mcpkit.requests"):
        async with connect(server) as client:
            await client.call_tool("add", {"a": 1, "b": 1})
            with pytest.raises(RemoteError):
                await client.call_tool("nope")
    records = [
        r
        for r in caplog.records
        if r.name == "mcpkit.requests" and getattr(r, "mcp_method", "") == "tools/call"
    ]
    assert [(r.mcp_name, r.mcp_outcome) for r in records] == [("add", "ok"), ("nope", "error -32602")]  # type: ignore[attr-defined]
    assert all(isinstance(r.mcp_ms, float) and r.mcp_client.startswith("client:") for r in records)  # type: ignore[attr-defined]


async def test_rate_limit_refuses_past_the_burst_per_client() -> None:
    server = build()
    server.middleware.add(RateLimit(per_second=0.5, burst=2), methods={"tools/call"})
    async with connect(server, name="greedy") as greedy, connect(server, name="calm") as calm:
        for _ in range(2):
            await greedy.call_tool("add", {"a": 1, "b": 1})
        with pytest.raises(RemoteError) as limited:
            await greedy.call_tool("add", {"a": 1, "b": 1})
        assert (await calm.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
        await greedy.list_tools()  # other methods are not limited
    assert limited.value.code == -32010 and limited.value.data["retryAfterMs"] > 0


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_a_rate_limit_per_tool_gives_each_tool_its_own_bucket_and_tools_limits_only_those(
    era: JSON,
) -> None:
    server = build()

    @server.tool()
    def sub(a: int, b: int) -> int:
        return a - b

    @server.tool()
    def free() -> str:
        return "free"

    server.middleware.add(RateLimit(per_second=0.001, burst=1, per_tool=True, tools={"add", "sub"}))
    async with connect(server, **era) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        await client.call_tool("sub", {"a": 1, "b": 1})  # its own bucket
        for _ in range(3):
            await client.call_tool("free", {})  # not counted
        with pytest.raises(RemoteError) as limited:
            await client.call_tool("sub", {"a": 1, "b": 1})
    assert limited.value.code == -32010 and limited.value.data["retryAfterMs"] > 900_000


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_a_concurrency_limit_refuses_a_call_past_its_cap_and_frees_the_slot_when_one_ends(
    era: JSON,
) -> None:
    server = build()
    entered, release = anyio.Event(), anyio.Event()

    @server.tool()
    async def hold() -> str:
        entered.set()  # past the limit: its slot is held
        await release.wait()
        return "held"

    server.middleware.add(ConcurrencyLimit(1, tools={"hold"}))
    async with connect(server, **era) as client, anyio.create_task_group() as tg:
        held: list[str] = []

        async def first() -> None:
            held.append((await client.call_tool("hold", {}))["content"][0]["text"])

        tg.start_soon(first)
        await entered.wait()
        with pytest.raises(RemoteError) as busy:
            await client.call_tool("hold", {})
        assert (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
        release.set()
    async with connect(server, **era) as client:
        assert (await client.call_tool("hold", {}))["content"][0]["text"] == "held"  # the slot came back
    assert held == ["held"]
    assert busy.value.code == -32010 and busy.value.data == {"retryAfterMs": 1000, "maxInFlight": 1}


async def test_timing_counts_each_method() -> None:
    server = build()
    seen: list[tuple[str, bool]] = []
    timing = Timing(on_request=lambda method, seconds, ok: seen.append((method, ok)))
    server.middleware.add(timing)
    async with connect(server) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        with pytest.raises(RemoteError):
            await client.call_tool("nope")
    stats = timing.stats["tools/call"]
    assert stats.count == 2 and stats.errors == 1 and 0 < stats.max_s <= stats.total_s
    assert ("tools/call", True) in seen and ("tools/call", False) in seen
