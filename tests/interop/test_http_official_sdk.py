"""mcpkit's Streamable HTTP client against the official Python SDK's HTTP server (SSE and JSON modes)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import connect_http
from peers import free_port, server_process

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["sse", "json"])
def sdk_url(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable,
        str(ROOT / "tests" / "interop" / "sdk_server.py"),
        "--http",
        "--port",
        str(port),
    ]
    if request.param == "json":
        command.append("--json")
    with server_process(command, port, {"PYTHONPATH": str(ROOT / "src")}), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield f"http://127.0.0.1:{port}/mcp" + ("#json" if request.param == "json" else "")


def handlers() -> dict[str, Any]:
    return {
        "sampling": lambda p: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "S"}},
        "elicitation": lambda p: {"action": "accept", "content": {"guests": 2, "confirm": True}},
        "roots": [{"uri": "file:///r", "name": "r"}],
    }


async def test_initialize_list_and_call_over_http(sdk_url: str) -> None:
    async with connect_http(sdk_url, era="handshake") as client:
        assert client.protocol == "2025-11-25"
        assert client.server_info["name"] == "sdk-interop-server"
        names = {t["name"] for t in await client.list_all_tools()}
        assert {"echo", "add", "ask_llm", "book", "countdown", "roots"} <= names
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
        await client.ping()


async def test_server_requests_during_a_call_are_answered_over_http(sdk_url: str) -> None:
    if sdk_url.endswith("#json"):
        pytest.skip("the SDK's JSON response mode has no channel for server-initiated requests")
    async with connect_http(sdk_url, era="handshake", **handlers()) as client:
        sampled = await client.call_tool("ask_llm", {"question": "q"})
        booked = await client.call_tool("book", {"restaurant": "r"})
        roots = await client.call_tool("roots", {})
    assert sampled["content"][0]["text"] == "model=m text=S"
    assert booked["content"][0]["text"] == "accepted guests=2 confirm=True"
    assert roots["structuredContent"] == {"result": ["file:///r"]}


async def test_progress_and_logs_arrive_over_http(sdk_url: str) -> None:
    if sdk_url.endswith("#json"):
        pytest.skip("the SDK's JSON response mode sends no progress or log notifications for a call")
    logs: list[dict[str, Any]] = []
    progress: list[tuple[float, float | None, str | None]] = []
    async with connect_http(sdk_url, era="handshake", on_log=logs.append) as client:
        await client.set_logging_level("debug")
        result = await client.call_tool("countdown", {"steps": 3}, on_progress=lambda *a: progress.append(a))
        await client.call_tool("chatty", {})
        await client.ping()
    assert result["content"][0]["text"] == "done 3"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert [entry["level"] for entry in logs] == ["debug", "info", "error"]


async def test_a_refused_connection_is_a_clear_error() -> None:
    from mcpkit import MCPError

    with pytest.raises(MCPError) as info:
        async with connect_http(f"http://127.0.0.1:{free_port()}/mcp", timeout=5):
            pass
    assert "ConnectError" in info.value.message
