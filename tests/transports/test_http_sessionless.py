"""A Streamable HTTP server keeping no sessions (`sessionless=True`): each handshake-era POST is served alone,
at the version its header names, with no made-up initialize in front of it (real uvicorn)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import httpx
import pytest
from test_http_server import events, hosted, init_body, rpc

from mcpkit import Context, Server
from mcpkit.runtime.stream import Inbound, MessageStream, Outgoing, StreamAttribute
from mcpkit.transports.http_server import MirrorsHeaders, StreamableHTTPApp
from messages import HEADERS

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

MODERN = "2026-07-28"
META = "io.modelcontextprotocol/"


def version_server() -> Server:
    server = Server("sessionless")

    @server.tool()
    def version(ctx: Context) -> str:
        return ctx.negotiated.version

    return server


class Recorder:
    """A bare `serve` target: records what its stream carries and answers every request with {}."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def serve(self, stream: MessageStream) -> None:
        self.seen.append(("pre_agreed", stream.extra(StreamAttribute.pre_agreed, None)))

        async def answer(inbound: Inbound) -> None:
            received = inbound.data
            message = received if isinstance(received, dict) else json.loads(bytes(received))  # type: ignore[arg-type]
            self.seen.append(message.get("method"))
            if "id" in message and "method" in message:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
                await stream.send(Outgoing(json.dumps(reply).encode(), message["id"]))

        await stream.deliver_to(answer)


async def test_serve_sees_only_the_posted_message_with_its_version_pre_agreed(hosting: str) -> None:
    recorder = Recorder()
    headers = {**HEADERS, "mcp-protocol-version": "2025-06-18"}
    async with hosted(hosting, StreamableHTTPApp(recorder, sessionless=True)) as (http, url):
        response = await http.post(url, content=rpc(1, "tools/list"), headers=headers)
    assert events(response.content)[-1] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert recorder.seen == [("pre_agreed", "2025-06-18"), "tools/list"]


async def test_a_server_serves_a_sessionless_call_at_the_version_its_header_names(hosting: str) -> None:
    app = StreamableHTTPApp(version_server(), sessionless=True, json_response=True)
    body = rpc(1, "tools/call", {"name": "version", "arguments": {}})
    async with hosted(hosting, app) as (http, url):
        named = await http.post(url, content=body, headers={**HEADERS, "mcp-protocol-version": "2025-06-18"})
        unnamed = await http.post(url, content=body, headers=HEADERS)  # the spec's SHOULD assume: 2025-03-26
        pinged = await http.post(url, content=rpc(2, "ping"), headers=HEADERS)
    assert named.json()["result"]["content"][0]["text"] == "2025-06-18"
    assert unnamed.json()["result"]["content"][0]["text"] == "2025-03-26"
    assert pinged.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}


async def test_a_sessionless_initialize_is_a_real_handshake_and_mints_no_session(hosting: str) -> None:
    app = StreamableHTTPApp(version_server(), sessionless=True, json_response=True)
    async with hosted(hosting, app) as (http, url):
        response = await http.post(url, content=init_body(version="2025-06-18"), headers=HEADERS)
    assert response.json()["result"]["protocolVersion"] == "2025-06-18"
    assert "mcp-session-id" not in response.headers


async def test_stateless_true_is_the_deprecated_name_of_sessionless_and_still_works() -> None:
    with pytest.warns(DeprecationWarning, match="sessionless"):
        app = StreamableHTTPApp(version_server(), stateless=True, json_response=True)
    assert app.sessionless and app.stateless
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        assert (await http.get("/mcp", headers=HEADERS)).status_code == 405
        response = await http.post("/mcp", content=rpc(1, "ping"), headers=HEADERS)
    await app.aclose()
    assert response.json()["result"] == {} and "mcp-session-id" not in response.headers


def test_sessionless_false_and_no_stateless_keyword_warn_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not StreamableHTTPApp(version_server()).sessionless


def modern_call(region_header: str) -> tuple[dict[str, str], bytes]:
    params = {
        "name": "regional",
        "arguments": {"region": "eu"},
        "_meta": {META + "protocolVersion": MODERN, META + "clientCapabilities": {}},
    }
    headers = {
        **HEADERS,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "regional",
        "mcp-param-region": region_header,
    }
    return headers, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}).encode()


async def test_an_explicit_header_mirror_checks_a_bare_targets_calls(hosting: str) -> None:
    recorder = Recorder()
    asked: list[str] = []

    def mirror(tool: str) -> list[tuple[str, tuple[str, ...]]]:
        asked.append(tool)
        return [("Region", ("region",))]

    assert not isinstance(recorder, MirrorsHeaders) and isinstance(Server("s"), MirrorsHeaders)
    app = StreamableHTTPApp(recorder, header_mirror=mirror, json_response=True)
    async with hosted(hosting, app) as (http, url):
        bad = await http.post(url, content=modern_call("us")[1], headers=modern_call("us")[0])
        good = await http.post(url, content=modern_call("eu")[1], headers=modern_call("eu")[0])
    assert asked == ["regional", "regional"]
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32020
    assert good.status_code == 200 and recorder.seen[-1] == "tools/call"
