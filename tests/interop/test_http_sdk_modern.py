"""mcpkit's client against the official SDK's Streamable HTTP server in both eras (mcp 2.x, JSON and SSE).

The SDK serves 2026-07-28 on the same endpoint as the handshake era: a POST whose
MCP-Protocol-Version names a modern version goes to its stateless path, which checks Mcp-Method,
Mcp-Name and Mcp-Param-* against the body. era="auto" must end modern there; "handshake" still works.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import MCPError, Server
from mcpkit.client import connect_http, era
from mcpkit.transports.http_server import StreamableHTTPApp
from peers import free_port, server_process, serving

pytestmark = [pytest.mark.interop, pytest.mark.anyio, pytest.mark.filterwarnings("ignore::UserWarning")]
HERE = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["sse", "json"])
def sdk(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(the SDK server's URL, its mode: "sse" or "json")."""
    port = free_port()
    command = [sys.executable, str(HERE / "sdk_header_server.py"), "--port", str(port)]
    if request.param == "json":
        command.append("--json")
    with (
        server_process(command, port, {"PYTHONPATH": str(HERE.parents[1] / "src")}),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        yield f"http://127.0.0.1:{port}/mcp", request.param


async def accept_ok(_params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


async def test_auto_mode_ends_modern_with_the_sdk_http_server_and_calls_tools(sdk: tuple[str, str]) -> None:
    era.forget()
    async with connect_http(sdk[0], era="auto", elicitation=accept_ok) as client:
        assert client.stateless and client.protocol == "2026-07-28"
        assert client.server_info["name"] == "sdk-interop-server"
        tools = {tool["name"] for tool in await client.list_all_tools()}
        assert {"echo", "confirm", "route"} <= tools
        echoed = await client.call_tool("echo", {"text": "héllo"})
        assert echoed["content"][0]["text"] == "héllo"
        confirmed = await client.call_tool("confirm", {})  # an InputRequiredResult, then the retry
        assert confirmed["content"][0]["text"] == "state=sdk-state-1 action=accept content={'ok': True}"
        read = await client.read_resource("sdk://static")
        assert read["contents"][0]["text"] == "static contents" and read["resultType"] == "complete"


async def test_an_x_mcp_header_parameter_is_mirrored_as_the_sdk_checks_it(sdk: tuple[str, str]) -> None:
    async with connect_http(sdk[0], era="modern") as client:
        await client.list_tools()
        routed = await client.call_tool("route", {"region": "Zürich"})  # non-ASCII: the Base64 form
        assert routed["content"][0]["text"] == "routed to Zürich"
        client.stream.modern.mirrored.clear()  # type: ignore[attr-defined]  # as if never listed
        with pytest.raises(MCPError) as caught:
            await client.call_tool("route", {"region": "eu-west1"})
        assert caught.value.code == -32020  # HeaderMismatch: the SDK did check the header


async def test_the_handshake_era_still_works_with_the_sdk_http_server(sdk: tuple[str, str]) -> None:
    async def elicit(_params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"guests": 2, "confirm": True}}

    url, mode = sdk
    async with connect_http(url, era="handshake", elicitation=elicit) as client:
        assert not client.stateless and client.protocol == "2025-11-25"
        if mode == "sse":  # in JSON mode the SDK has no channel for a server-initiated request
            booked = await client.call_tool("book", {"restaurant": "R"})
            assert booked["content"][0]["text"] == "accepted guests=2 confirm=True"
        routed = await client.call_tool("route", {"region": "eu-west1"})
        assert routed["content"][0]["text"] == "routed to eu-west1"


async def test_a_2026_notification_without_a_session_is_accepted_as_the_sdk_server_accepts_it(
    sdk: tuple[str, str],
) -> None:
    """Issue 31 item 22: the TS v2 client POSTs notifications/cancelled, with no session, each time it
    closes a subscription; the official servers answer 202 and so must mcpkit's."""
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
    }
    async with serving(StreamableHTTPApp(Server("mcpkit"))) as ours, httpx.AsyncClient() as http:
        theirs = await http.post(sdk[0], json=note, headers=headers)
        mine = await http.post(ours, json=note, headers=headers)
    assert theirs.status_code == 202
    assert (mine.status_code, mine.content) == (202, b"")
