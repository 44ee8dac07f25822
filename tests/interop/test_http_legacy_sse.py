"""mcpkit's client against the official SDK's 2024-11-05 HTTP+SSE server (MCPServer.sse_app on uvicorn).

connect_http is given the SSE URL as if it were a Streamable HTTP endpoint: the initialize POST is
refused (405), so the client falls back (transports 2025-03-26+ "Backwards Compatibility").
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpkit import MCPError
from mcpkit.client.client import connect_http
from mcpkit.transports.http_client import HTTPClientStream
from mcpkit.transports.http_client.legacy_sse import open_legacy_sse_stream

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
ROOT = Path(__file__).resolve().parents[2]

# tests/interop/sdk_server.py's MCPServer, served over the legacy transport.
SERVE = """
import sys, uvicorn
sys.path.insert(0, {here!r})
from sdk_server import mcp
uvicorn.run(mcp.sse_app(), host="127.0.0.1", port={port}, log_level="warning")
"""


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = SERVE.format(here=str(Path(__file__).parent), port=port)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("the SDK's SSE server did not start")
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        process.terminate()
        process.wait(10)


async def test_connect_http_falls_back_to_the_sdks_sse_server_and_lists_and_calls_tools(sse_url: str) -> None:
    async with connect_http(sse_url, timeout=10) as client:
        stream = client.stream
        assert isinstance(stream, HTTPClientStream) and stream.legacy is not None
        assert stream.legacy.endpoint is not None and "/messages/" in stream.legacy.endpoint
        assert client.server_info["name"] == "sdk-interop-server"
        names = {tool["name"] for tool in await client.list_all_tools()}
        assert {"echo", "add"} <= names
        echoed = await client.call_tool("echo", {"text": "over HTTP+SSE"})
        assert echoed["content"][0]["text"] == "over HTTP+SSE"
        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert added["structuredContent"] == {"result": 42}
        await client.ping()


async def test_a_bad_call_over_http_sse_is_a_tool_error_and_the_connection_lives_on(sse_url: str) -> None:
    async with connect_http(sse_url, timeout=10) as client:
        bad = await client.call_tool("add", {"a": "not a number"})
        assert bad["isError"] is True
        with pytest.raises(MCPError):
            await client.get_prompt("no-such-prompt")
        assert (await client.call_tool("echo", {"text": "still here"}))["content"][0]["text"] == "still here"


async def test_the_legacy_stream_opens_directly_too(sse_url: str) -> None:
    from mcpkit import Client

    async with open_legacy_sse_stream(sse_url, timeout=10) as stream, Client(stream, timeout=10) as client:
        assert (await client.call_tool("echo", {"text": "direct"}))["content"][0]["text"] == "direct"


async def test_the_sdks_sse_server_refuses_the_streamable_post_that_triggers_the_fallback(
    sse_url: str,
) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(sse_url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    assert response.status_code in (400, 404, 405)


async def test_auto_mode_falls_back_from_the_probe_to_initialize_and_then_to_http_sse(sse_url: str) -> None:
    async with connect_http(sse_url, timeout=10, era="auto") as client:
        stream = client.stream
        assert isinstance(stream, HTTPClientStream) and stream.legacy is not None
        assert not client.stateless and client.server_info["name"] == "sdk-interop-server"
        assert (await client.call_tool("echo", {"text": "probed"}))["content"][0]["text"] == "probed"
