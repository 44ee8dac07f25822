"""Both protocol eras against the official MCP Python SDK (mcp 2.3), over stdio, in both directions.

Part 1: the SDK's high-level `Client` (auto mode probes server/discover; "legacy" forces initialize)
against mcpkit's examples/everything.py. Part 2: mcpkit's client against the SDK's `MCPServer`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

from mcp import StdioServerParameters, types  # noqa: E402
from mcp.client import ClientRequestContext  # noqa: E402
from mcp.client.client import Client as SDKClient  # noqa: E402
from mcp.shared.exceptions import MCPError as SDKError  # noqa: E402
from pydantic import FileUrl  # noqa: E402

from mcpkit.client import connect_stdio  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.anyio, pytest.mark.filterwarnings("ignore::UserWarning")]

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = StdioServerParameters(
    command=sys.executable,
    args=[str(REPO / "examples" / "everything.py")],
    env={**os.environ, "PYTHONPATH": str(REPO / "src")},
)
SDK_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "sdk_server.py")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def sdk_elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"guests": 3, "confirm": True})


async def sdk_sample(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    content = types.TextContent(type="text", text="An SDK summary.")
    return types.CreateMessageResult(role="assistant", content=content, model="sdk", stop_reason="endTurn")


async def sdk_roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///sdk/root"), name="root")])


def sdk_client(mode: str, **options: Any) -> SDKClient:
    return SDKClient(
        EVERYTHING,
        mode=mode,
        elicitation_callback=sdk_elicit,
        sampling_callback=sdk_sample,
        list_roots_callback=sdk_roots,
        **options,
    )


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_the_sdk_client_in_auto_mode_ends_modern_with_mcpkit_and_works() -> None:
    async with sdk_client("auto") as client:
        assert client.protocol_version == "2026-07-28"
        assert client.server_info is not None and client.server_info.name == "mcpkit-everything"
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"echo", "book_table", "summarize"} <= tools
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
        add = await client.call_tool("add", {"a": 1, "b": 2})
        assert add.structured_content == {"result": 3}


async def test_one_elicit_using_tool_works_in_both_eras_with_the_sdk_client() -> None:
    for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
        async with sdk_client(mode) as client:
            assert client.protocol_version == version
            booked = await client.call_tool("book_table", {"restaurant": "Chez Ada"})
            assert text_of(booked) == "Booked Chez Ada for 3.", mode


async def test_sampling_and_roots_come_back_as_input_required_rounds_for_the_sdk_client() -> None:
    async with sdk_client("auto") as client:
        assert text_of(await client.call_tool("summarize", {"topic": "mcp"})) == "An SDK summary."
        roots = await client.call_tool("list_client_roots", {})
        assert roots.structured_content == {"result": ["file:///sdk/root"]}


async def test_a_missing_resource_is_minus_32602_in_the_modern_era_and_32002_before() -> None:
    for mode, code in (("auto", -32602), ("legacy", -32002)):
        async with sdk_client(mode) as client:
            with pytest.raises(SDKError) as caught:
                await client.read_resource("mcpkit://nothing-here")
            assert caught.value.error.code == code, mode


async def test_modern_logs_reach_the_sdk_only_at_the_level_it_opted_in_to() -> None:
    seen: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen.append(params.level)

    async with sdk_client("auto", logging_callback=on_log, log_level="error") as client:
        await client.call_tool("log_levels", {})
    assert seen == ["error", "critical", "alert", "emergency"]


async def test_mcpkit_client_auto_mode_ends_modern_with_the_sdk_server() -> None:
    async def elicit(_params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True}}

    async with connect_stdio(SDK_SERVER, elicitation=elicit, era="auto") as client:
        assert client.stateless and client.protocol == "2026-07-28"
        assert client.server_info["name"] == "sdk-interop-server"
        result = await client.call_tool("confirm", {})
        assert result["content"][0]["text"] == "state=sdk-state-1 action=accept content={'ok': True}"
        read = await client.read_resource("sdk://static")
        assert read["contents"][0]["text"] == "static contents" and read["resultType"] == "complete"


async def test_mcpkit_client_pinned_to_the_handshake_era_works_with_the_sdk_server() -> None:
    async def elicit(_params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"guests": 2, "confirm": True}}

    async with connect_stdio(SDK_SERVER, elicitation=elicit, era="handshake") as client:
        assert not client.stateless and client.protocol == "2025-11-25"
        result = await client.call_tool("book", {"restaurant": "R"})
        assert result["content"][0]["text"] == "accepted guests=2 confirm=True"


async def test_auto_mode_ends_modern_with_an_sdk_server_slower_to_start_than_the_probe() -> None:
    """Issue 31 item 20: the probe times out, the server then answers it and refuses the fallback
    initialize (-32022, naming its versions): that is modern evidence, so the client probes again."""
    slow = {**os.environ, "SDK_SERVER_START_DELAY": "1.5"}
    async with connect_stdio(SDK_SERVER, env=slow, era="auto", era_key=None, probe_timeout=0.5) as client:
        assert client.stateless and client.protocol == "2026-07-28"
        assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
