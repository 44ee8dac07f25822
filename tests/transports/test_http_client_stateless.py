"""The HTTP client in the stateless era (transports "Streamable HTTP" 2026-07-28), against the scripted fake.

Request metadata headers on the wire, no session and no GET stream, cancellation by closing the
response stream, and the era probe over HTTP: a refusal's JSON-RPC error reaches the client
intact, anything else (or a `{}` discover result) falls back to initialize.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from test_http_client import Exchange, FakeServer, serving

from mcpkit import Context, MCPError, Server
from mcpkit.client import connect_http
from mcpkit.protocol.stateless import PROTOCOL_VERSION
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

JSON = dict[str, Any]
MODERN = "2026-07-28"
SESSION = "fake-session"
TOOLS = [
    {
        "name": "weather",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "days": {"type": "integer"},
            },
        },
    },
    {
        "name": "broken",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
    },
]


def result(x: Exchange, body: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": x.message["id"], "result": {"resultType": "complete", **body}}


def discovered(x: Exchange) -> JSON:
    return result(x, {"supportedVersions": [MODERN], "capabilities": {"tools": {}, "resources": {}}})


async def modern_server(x: Exchange) -> bool:
    """A 2026-07-28 server that (wrongly) hands out a session id a modern client must ignore."""
    method = x.message.get("method")
    answers = {
        "server/discover": lambda: discovered(x),
        "tools/list": lambda: result(x, {"tools": TOOLS}),
        "tools/call": lambda: result(x, {"content": [{"type": "text", "text": "sunny"}]}),
        "resources/read": lambda: result(x, {"contents": [{"uri": "file:///é", "text": "hi"}]}),
    }
    if x.method != "POST" or method not in answers:
        return False
    await x.json(200, answers[method](), mcp_session_id=SESSION)
    return True


def meta_version(x: Exchange) -> Any:
    return (x.message.get("params") or {}).get("_meta", {}).get(PROTOCOL_VERSION)


async def test_each_modern_request_carries_its_metadata_headers_and_no_session() -> None:
    fake = FakeServer(modern_server)
    async with serving(fake) as url, connect_http(url, era="modern") as client:
        assert client.stateless and client.protocol == MODERN
        await client.list_tools()
        await client.call_tool("weather", {"region": "Zürich", "days": 3})
        await client.read_resource("file:///é")
    assert [x.method for x in fake.seen] == ["POST"] * 4  # no GET stream, no DELETE
    for x in fake.seen:
        assert x.headers["mcp-protocol-version"] == meta_version(x) == MODERN
        assert x.headers["mcp-method"] == x.message["method"]
        assert "mcp-session-id" not in x.headers
    call, read = fake.requests("tools/call")[0], fake.requests("resources/read")[0]
    assert call.headers["mcp-name"] == "weather"
    assert call.headers["mcp-param-region"] == "=?base64?WsO8cmljaA==?="
    assert "mcp-param-days" not in call.headers
    assert read.headers["mcp-name"] == "=?base64?ZmlsZTovLy/DqQ==?="


async def test_a_tool_with_an_invalid_x_mcp_header_is_left_out_of_tools_list() -> None:
    async with serving(FakeServer(modern_server)) as url, connect_http(url, era="modern") as client:
        listed = await client.list_tools()
    assert [tool["name"] for tool in listed["tools"]] == ["weather"]


async def test_the_handshake_era_over_http_sends_no_modern_headers() -> None:
    fake = FakeServer()
    async with serving(fake) as url, connect_http(url, era="handshake") as client:
        await client.ping()
    ping = fake.requests("ping")[0]
    assert "mcp-method" not in ping.headers and ping.headers["mcp-session-id"] == SESSION


class Watching(FakeServer):
    """Keeps the latest request's ASGI `receive`, which reports the client closing the connection."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.receive = receive
        await super().__call__(scope, receive, send)


async def test_cancelling_a_modern_request_closes_its_stream_and_posts_no_cancellation() -> None:
    state: JSON = {}

    async def slow(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return await modern_server(x)
        await x.start(200)
        await x.raw(": working\n\n")
        state["event"] = (await fake.receive())["type"]  # blocks until the client hangs up
        return True

    fake = Watching(slow)
    async with serving(fake) as url, connect_http(url, era="modern") as client:
        with pytest.raises(MCPError, match="timed out"):
            await client.call_tool("weather", {}, timeout=0.3)
        with anyio.fail_after(3):
            while "event" not in state:
                await anyio.sleep(0.05)
        await client.list_tools()  # the client goes on; nothing was POSTed for the cancellation
    assert state["event"] == "http.disconnect"
    assert not fake.requests("notifications/cancelled")


# ---- the probe over HTTP -------------------------------------------------------------------------


async def empty(x: Exchange) -> bool:
    """A server/discover answered with an empty result: what a handshake-era server may do."""
    if x.message.get("method") == "server/discover":
        await x.json(200, {"jsonrpc": "2.0", "id": x.message["id"], "result": {}})
        return True
    return False


async def test_a_discover_answered_with_an_empty_result_means_legacy_and_the_client_initializes() -> None:
    fake = FakeServer(empty)
    async with serving(fake) as url, connect_http(url, era="auto") as client:
        assert not client.stateless and client.protocol == "2025-11-25"
    assert len(fake.requests("initialize")) == 1


async def test_pinned_modern_against_an_empty_discover_result_fails_clearly() -> None:
    async with serving(FakeServer(empty)) as url:
        with pytest.raises(MCPError, match="no supportedVersions"):
            async with connect_http(url, era="modern"):
                pass


def refusing(status: int, body: bytes | JSON, times: int = 1) -> Any:
    refused: list[int] = []

    async def handler(x: Exchange) -> bool:
        if x.message.get("method") == "server/discover" and len(refused) < times:
            refused.append(status)
            await x.json(status, body)
            return True
        return await modern_server(x)

    return handler


def rpc_error(code: int, data: Any = None) -> JSON:
    error: JSON = {"code": code, "message": "refused"}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": None, "error": error}


async def test_a_400_unsupported_version_reaches_the_probe_intact_and_it_retries_with_one_offered() -> None:
    body = rpc_error(-32022, {"supported": [MODERN], "requested": MODERN})
    fake = FakeServer(refusing(400, body))
    async with serving(fake) as url, connect_http(url, era="auto") as client:
        assert client.stateless and client.protocol == MODERN
    assert len(fake.requests("server/discover")) == 2 and not fake.requests("initialize")


async def test_the_supported_list_of_a_refusal_reaches_the_client() -> None:
    body = rpc_error(-32022, {"supported": ["2099-01-01"], "requested": MODERN})
    async with serving(FakeServer(refusing(400, body, times=5))) as url:
        with pytest.raises(MCPError, match=r"2099-01-01"):
            async with connect_http(url, era="auto"):
                pass


async def test_a_modern_header_mismatch_is_raised_not_taken_for_a_legacy_server() -> None:
    fake = FakeServer(refusing(400, rpc_error(-32020)))
    async with serving(fake) as url:
        with pytest.raises(MCPError) as caught:
            async with connect_http(url, era="auto"):
                pass
    assert caught.value.code == -32020 and not fake.requests("initialize")


@pytest.mark.parametrize(
    ("status", "body"),
    [(400, b"Bad Request: missing session"), (404, b""), (405, b"nope"), (400, rpc_error(-32600))],
)
async def test_a_refused_probe_without_a_modern_error_falls_back_to_initialize(
    status: int, body: Any
) -> None:
    fake = FakeServer(refusing(status, body))
    async with serving(fake) as url, connect_http(url, era="auto") as client:
        assert not client.stateless and client.protocol == "2025-11-25"
        await client.ping()
    assert len(fake.requests("initialize")) == 1


# ---- against mcpkit's own Streamable HTTP server, which checks the headers -------------------------


def mcpkit_server() -> Server:
    server = Server("mcpkit-http")
    region = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}

    @server.tool(input_schema=region)
    def regional(region: str = "") -> str:
        return f"ran in {region}"

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("name?", schema, key="who")
        return f"hi {(answer.content or {}).get('name')}"

    return server


async def test_auto_mode_ends_modern_with_mcpkits_http_server_which_accepts_the_headers() -> None:
    async def elicit(_params: JSON) -> JSON:
        return {"action": "accept", "content": {"name": "Ada"}}

    app = StreamableHTTPApp(mcpkit_server())
    async with serving(app) as url, connect_http(url, era="auto", elicitation=elicit) as client:
        assert client.stateless and client.protocol == MODERN
        await client.list_tools()
        ran = await client.call_tool("regional", {"region": " Zürich "})
        assert ran["content"][0]["text"] == "ran in  Zürich "
        assert (await client.call_tool("ask", {}))["content"][0]["text"] == "hi Ada"


async def test_a_listen_stream_may_stay_quiet_longer_than_the_client_timeout() -> None:
    server = mcpkit_server()
    async with (
        serving(StreamableHTTPApp(server)) as url,
        connect_http(url, era="modern", timeout=0.5) as client,
        client.listen(tools=True) as subscription,
    ):
        await anyio.sleep(1.0)  # twice the read timeout, with nothing to say
        server.add_tool(lambda: "x", name="late")
        with anyio.fail_after(5):
            method, _params = await subscription.__anext__()
    assert method == "notifications/tools/list_changed"


async def test_the_era_found_at_an_endpoint_is_remembered_so_the_next_connection_skips_the_probe() -> None:
    fake = FakeServer(empty)
    async with serving(fake) as url:
        for _ in range(2):
            async with connect_http(url, era="auto") as client:
                assert not client.stateless
    assert len(fake.requests("server/discover")) == 1 and len(fake.requests("initialize")) == 2
