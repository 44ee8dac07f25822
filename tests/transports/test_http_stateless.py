"""Streamable HTTP in the 2026-07-28 era, beside handshake sessions on the same endpoint (real uvicorn)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from test_http_server import hosted

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

V = "2026-07-28"
META = "io.modelcontextprotocol/"
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def make_server() -> Server:
    server = Server("stateless-http")

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("name?", schema, key="who")
        return f"hi {(answer.content or {}).get('name')}"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("working")
        return "done"

    @server.tool()
    async def needs_sampling(ctx: Context) -> str:
        return str((await ctx.sample("x"))["content"])

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        }
    )
    def regional(region: str = "") -> str:
        return f"ran in {region}"

    return server


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    fields = {META + "protocolVersion": V, META + "clientCapabilities": caps or {}}
    return {**fields, **{META + k: v for k, v in extra.items()}}


def request(rid: int, method: str, params: dict[str, Any], **headers: str) -> tuple[dict[str, str], bytes]:
    hdrs = {**BASE, "mcp-protocol-version": V, "mcp-method": method}
    if method in ("tools/call", "prompts/get"):
        hdrs["mcp-name"] = params["name"]
    if method == "resources/read":
        hdrs["mcp-name"] = params["uri"]
    hdrs.update(headers)
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": meta(), **params}}
    return hdrs, json.dumps(body).encode()


async def post(
    http: httpx.AsyncClient, url: str, rid: int, method: str, params: dict[str, Any], **headers: str
) -> httpx.Response:
    hdrs, body = request(rid, method, params, **headers)
    return await http.post(url, content=body, headers=hdrs)


async def test_discover_and_a_call_need_no_session_and_mint_none(hosting: str) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server())) as (http, url):
        found = await post(http, url, 1, "server/discover", {})
        called = await post(http, url, 2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert found.status_code == 200 and found.json()["result"]["supportedVersions"][0] == V
    assert "mcp-session-id" not in found.headers and "mcp-session-id" not in called.headers
    assert (
        called.json()["result"]["content"][0]["text"] == "5"
        and called.json()["result"]["resultType"] == "complete"
    )


@pytest.mark.parametrize(
    ("headers", "code", "status"),
    [
        ({"mcp-method": "tools/list"}, -32020, 400),  # Mcp-Method differs from the body
        ({"mcp-name": "other"}, -32020, 400),  # Mcp-Name differs from params.name
        ({"mcp-protocol-version": "2025-11-25"}, -32020, 400),  # header vs _meta version
        ({"mcp-param-region": "us"}, -32020, 400),  # x-mcp-header value differs
    ],
)
@requirement("modern-header-mismatch")
async def test_headers_that_do_not_match_the_body_are_400_header_mismatch(
    headers: dict[str, str], code: int, status: int, hosting: str
) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server())) as (http, url):
        reply = await post(
            http, url, 7, "tools/call", {"name": "regional", "arguments": {"region": "eu"}}, **headers
        )
    assert reply.status_code == status
    assert reply.json()["id"] == 7 and reply.json()["error"]["code"] == code


async def test_a_mirrored_parameter_with_its_header_runs(hosting: str) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server())) as (http, url):
        params = {"name": "regional", "arguments": {"region": "eu"}}
        reply = await post(http, url, 1, "tools/call", params, **{"mcp-param-region": "eu"})
        missing = await post(http, url, 2, "tools/call", params)  # the body has it, the header does not
    assert reply.json()["result"]["content"][0]["text"] == "ran in eu"
    assert missing.status_code == 400 and missing.json()["error"]["code"] == -32020


async def test_modern_errors_carry_their_http_status_and_request_id(hosting: str) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server())) as (http, url):
        no_meta = await http.post(
            url,
            content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode(),
            headers={**BASE, "mcp-protocol-version": V, "mcp-method": "tools/list"},
        )
        hdrs, body = request(2, "tools/list", {})
        body = body.replace(V.encode(), b"1900-01-01")
        unsupported = await http.post(
            url, content=body, headers={**hdrs, "mcp-protocol-version": "1900-01-01"}
        )
        removed = await post(http, url, 3, "ping", {})
        missing_cap = await post(http, url, 4, "tools/call", {"name": "needs_sampling", "arguments": {}})
    assert (no_meta.status_code, no_meta.json()["error"]["code"], no_meta.json()["id"]) == (400, -32602, 1)
    assert (unsupported.status_code, unsupported.json()["error"]["code"]) == (400, -32022)
    assert unsupported.json()["error"]["data"]["requested"] == "1900-01-01"
    assert (removed.status_code, removed.json()["error"]["code"], removed.json()["id"]) == (404, -32601, 3)
    assert (missing_cap.status_code, missing_cap.json()["error"]["code"]) == (400, -32021)


async def test_an_input_required_round_trip_over_http(hosting: str) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server())) as (http, url):
        caps: dict[str, Any] = {"elicitation": {}}
        hdrs, body = request(1, "tools/call", {"name": "ask", "arguments": {}})
        first = json.loads(body)
        first["params"]["_meta"] = meta(caps)
        r1 = (await http.post(url, content=json.dumps(first).encode(), headers=hdrs)).json()["result"]
        assert r1["resultType"] == "input_required" and "who" in r1["inputRequests"]
        retry = json.loads(body)
        retry["id"] = 2
        retry["params"].update(
            {"_meta": meta(caps), "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}}}
        )
        retry["params"]["requestState"] = r1["requestState"]
        r2 = (await http.post(url, content=json.dumps(retry).encode(), headers=hdrs)).json()["result"]
    assert r2["content"][0]["text"] == "hi Ada"


async def test_logs_come_first_on_an_sse_answer_only_when_asked_for(hosting: str) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server())) as (http, url):
        quiet = await post(http, url, 1, "tools/call", {"name": "chatty", "arguments": {}})
        hdrs, body = request(2, "tools/call", {"name": "chatty", "arguments": {}})
        loud_body = json.loads(body)
        loud_body["params"]["_meta"] = meta(logLevel="info")
        loud = await http.post(url, content=json.dumps(loud_body).encode(), headers=hdrs)
    assert quiet.headers["content-type"].startswith("application/json")
    assert loud.headers["content-type"].startswith("text/event-stream")
    frames = [json.loads(e.data) for e in SSEDecoder().feed(loud.content) if e.data]
    assert [f.get("method") for f in frames] == ["notifications/message", None]
    assert frames[1]["result"]["content"][0]["text"] == "done"


async def test_a_listen_stream_acknowledges_delivers_and_ends_when_closed(hosting: str) -> None:
    server = make_server()
    async with hosted(hosting, StreamableHTTPApp(server), timeout=5) as (http, url):
        hdrs, body = request(9, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with http.stream("POST", url, content=body, headers=hdrs) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            decoder, frames = SSEDecoder(), []
            async for chunk in response.aiter_bytes():
                frames += [json.loads(e.data) for e in decoder.feed(chunk) if e.data]
                if len(frames) == 1:
                    server.add_tool(lambda: "x", name="late")
                if len(frames) == 2:
                    break
        with anyio.fail_after(5):
            while server.peers.listeners:  # closing the stream cancelled the subscription
                await anyio.sleep(0.02)
    assert frames[0]["method"] == "notifications/subscriptions/acknowledged"
    assert frames[1]["method"] == "notifications/tools/list_changed"
    assert frames[1]["params"]["_meta"][META + "subscriptionId"] == 9


async def test_a_handshake_session_and_stateless_requests_share_one_endpoint(hosting: str) -> None:
    async with (
        hosted(hosting, StreamableHTTPApp(make_server(), json_response=True)) as (http, url),
    ):
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        }
        opened = await http.post(url, content=json.dumps(init).encode(), headers=BASE)
        sid = opened.headers["mcp-session-id"]
        old_call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 1}},
        }
        session_headers = {**BASE, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        old = await http.post(url, content=json.dumps(old_call).encode(), headers=session_headers)
        new = await post(http, url, 3, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})
    assert opened.json()["result"]["protocolVersion"] == "2025-11-25"
    assert old.json()["result"]["content"][0]["text"] == "2" and "resultType" not in old.json()["result"]
    assert (
        new.json()["result"]["content"][0]["text"] == "4" and new.json()["result"]["resultType"] == "complete"
    )


async def test_repeated_orphan_and_unsafe_integer_headers_are_refused_over_http(hosting: str) -> None:
    server = make_server()

    @server.tool(
        input_schema={"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    )
    def counted(n: int = 0) -> str:
        return str(n)

    async with hosted(hosting, StreamableHTTPApp(server)) as (http, url):
        hdrs, body = request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        twice = [*hdrs.items(), ("mcp-name", "regional")]  # a proxy would route on the first copy
        repeated = await http.post(url, content=body, headers=twice)
        orphan = await post(
            http, url, 2, "tools/call", {"name": "regional", "arguments": {}}, **{"mcp-param-region": "eu"}
        )
        big = {"name": "counted", "arguments": {"n": 2**53 + 1}}
        rounded = await post(http, url, 3, "tools/call", big, **{"mcp-param-n": "1"})
        exact = await post(http, url, 4, "tools/call", big, **{"mcp-param-n": str(2**53 + 1)})
    for reply, rid in ((repeated, 1), (orphan, 2), (rounded, 3)):
        assert reply.status_code == 400, reply.text
        assert reply.json()["id"] == rid and reply.json()["error"]["code"] == -32020
    assert "more than once" in repeated.json()["error"]["message"]
    assert exact.status_code == 200 and exact.json()["result"]["content"][0]["text"] == str(2**53 + 1)
