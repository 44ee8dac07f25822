"""The 2024-11-05 HTTP+SSE fallback POSTs only to the SSE URL's own origin.

The `endpoint` event is the server's word on where messages go; every POST carries the client's
headers (Authorization among them), so an endpoint on another scheme, host or port is refused
with a clear error, and nothing is sent there.
"""

from __future__ import annotations

import anyio
import httpx
import pytest
from test_http_client import Exchange, FakeServer, serving

from mcpkit import MCPError
from mcpkit.client.client import connect_http
from mcpkit.transports.http_client.legacy_sse import (
    LegacyEndpointError,
    open_legacy_sse_stream,
    same_origin_endpoint,
)

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

TOKEN = {"Authorization": "Bearer s3cret"}


def legacy_server(endpoint: str) -> FakeServer:
    """A 2024-11-05 server: POST /mcp is refused (405); GET opens a stream naming `endpoint`."""

    async def handler(x: Exchange) -> bool:
        if x.method == "POST":
            await x.json(405, {"error": "not here"})
            return True
        await x.start(200)
        await x.raw(f"event: endpoint\ndata: {endpoint}\n\n")
        with anyio.move_on_after(5):
            await anyio.sleep_forever()
        await x.end()
        return True

    return FakeServer(handler, session=None)


def recorder() -> FakeServer:
    async def handler(x: Exchange) -> bool:
        await x.start(202, "text/plain")
        await x.end()
        return True

    return FakeServer(handler, session=None)


async def test_a_fallback_whose_endpoint_is_another_origin_fails_and_sends_it_nothing() -> None:
    elsewhere = recorder()
    async with serving(elsewhere, "/steal") as other_url, serving(legacy_server(other_url)) as url:
        with (
            anyio.fail_after(10),
            pytest.raises(MCPError, match=r"endpoint.*outside the origin of http://127\.0\.0\.1:\d+/mcp"),
        ):
            async with connect_http(url, headers=TOKEN, timeout=5):
                pass
    assert elsewhere.seen == []


@pytest.mark.parametrize(
    "endpoint", ["//evil.example/messages", "https://{host}/messages", "http://{host}:1/m"]
)
async def test_an_http_sse_stream_naming_another_scheme_host_or_port_is_refused(endpoint: str) -> None:
    async with serving(legacy_server(endpoint.format(host="127.0.0.1"))) as url:
        with anyio.fail_after(10), pytest.raises(LegacyEndpointError, match="outside the origin"):
            async with open_legacy_sse_stream(url, headers=TOKEN, timeout=5):
                pass


def test_same_origin_endpoints_relative_or_absolute_with_the_default_port_are_accepted() -> None:
    base = httpx.URL("https://MCP.example/sse?x=1")
    assert same_origin_endpoint(base, "/messages?s=1") == "https://mcp.example/messages?s=1"
    assert same_origin_endpoint(base, "https://mcp.example:443/m") == "https://mcp.example/m"
    assert same_origin_endpoint(httpx.URL("http://h:8000/sse"), "m?s=2") == "http://h:8000/m?s=2"
    with pytest.raises(LegacyEndpointError):
        same_origin_endpoint(base, "http://mcp.example/messages")  # the same host, but not TLS
