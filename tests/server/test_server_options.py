"""Server defaults that matter for security: the requestState key and masking tool errors."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit import Context, MCPError, Server
from mcpkit.server.request_state import StateSealer
from mcpkit.server.tools import ToolError
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def asking_server(**options: Any) -> Server:
    server = Server("asks", **options)

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        return f"hi {(answer.content or {}).get('n')}"

    return server


def accept(_params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"n": "Ada"}}


def key_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "random per-process key" in r.getMessage()]


async def test_the_random_default_state_key_warns_once_when_state_is_sealed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    server = asking_server()
    assert key_warnings(caplog) == []  # nothing sealed yet: a server that never asks stays quiet
    async with connect(server, era="modern", elicitation=accept) as client:
        for _ in range(3):
            assert (await client.call_tool("greet"))["content"][0]["text"] == "hi Ada"
    [warning] = key_warnings(caplog)
    assert "state_key" in warning


async def test_a_configured_state_key_never_warns(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "mcpkit")
    async with connect(asking_server(state_key=b"k" * 32), era="modern", elicitation=accept) as client:
        assert (await client.call_tool("greet"))["content"][0]["text"] == "hi Ada"
    assert key_warnings(caplog) == []


def test_an_empty_state_key_is_refused() -> None:
    with pytest.raises(ValueError, match="state_key"):
        Server("s", state_key=b"")


def test_state_sealed_under_a_random_key_is_refused_after_a_restart() -> None:
    token = StateSealer().seal({"answers": {}}, "binding")
    with pytest.raises(MCPError) as info:
        StateSealer().open(token, "binding")  # a new process: a new random key
    assert info.value.code == -32602
    shared = StateSealer(b"shared-secret")
    assert StateSealer(b"shared-secret").open(shared.seal({"x": 1}, "b"), "b") == {"x": 1}


def failing_server(**options: Any) -> Server:
    server = Server("fails", **options)

    @server.tool()
    def leaky() -> str:
        raise RuntimeError("password=hunter2 at /srv/app/db.py")

    @server.tool()
    def explained() -> str:
        raise ToolError("the order does not exist")

    @server.tool()
    def coded() -> str:
        raise MCPError(-32602, "quantity must be positive")

    return server


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_mask_errors_hides_unexpected_exception_text_but_keeps_deliberate_messages(era: str) -> None:
    async with connect(failing_server(mask_errors=True), era=era) as client:
        leaky = await client.call_tool("leaky")
        explained = await client.call_tool("explained")
        with pytest.raises(MCPError) as coded:
            await client.call_tool("coded")
    assert leaky["isError"] is True and "hunter2" not in str(leaky) and "internal error" in str(leaky)
    assert explained["isError"] is True and explained["content"][0]["text"] == "the order does not exist"
    assert coded.value.message == "quantity must be positive"


async def test_without_mask_errors_the_exception_text_reaches_the_model() -> None:
    async with connect(failing_server(), era="handshake") as client:
        leaky = await client.call_tool("leaky")
    assert "hunter2" in leaky["content"][0]["text"]
