"""Interop: the official Python SDK's client sends an API key as a static Authorization header to an mcpkit
server behind APIKeyVerifier, calls a tool as the key's subject, and past a RateLimit gets the refusal in
MCP terms (-32010 with retryAfterMs), which it raises as an MCPError."""

from __future__ import annotations

import warnings

import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import peers
from mcpkit import Context, Server
from mcpkit.auth import APIKey, APIKeyVerifier, protect
from mcpkit.server.middleware import RateLimit
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
warnings.filterwarnings("ignore", category=UserWarning)

KEY = "sdk-client-key-0123456789abcdef"


def keyed_server() -> Server:
    server = Server("keyed")

    @server.tool()
    def whoami(ctx: Context) -> str:
        assert ctx.auth is not None
        return f"{ctx.auth.subject} via {ctx.auth.claims['key_id']}"

    server.middleware.add(RateLimit(per_second=0.001, burst=2), methods={"tools/call"})
    return server


async def test_the_sdk_client_calls_with_an_api_key_and_sees_the_rate_limit_as_an_mcp_error() -> None:
    port = peers.free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    entry = APIKey.of(KEY, "sdk-bot", ["mcp:tools"])
    app = protect(
        StreamableHTTPApp(keyed_server()), verifier=APIKeyVerifier([entry], audience=url), resource=url
    )
    async with (
        peers.serving(app, port=port),
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}, timeout=20) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        results = [await session.call_tool("whoami", {}) for _ in range(2)]
        with pytest.raises(MCPError) as refused:
            await session.call_tool("whoami", {})
    texts = [b.text for r in results for b in r.content if isinstance(b, types.TextContent)]
    assert texts == [f"sdk-bot via {entry.key_id}"] * 2
    assert refused.value.error.code == -32010
    assert isinstance(refused.value.error.data, dict) and refused.value.error.data["retryAfterMs"] > 0
