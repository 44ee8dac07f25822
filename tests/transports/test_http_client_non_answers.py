"""A POST answered with something that is no MCP answer fails its request at once, naming what came.

Spec 2025-11-25 transports "Sending Messages to the Server" 5: a request's answer is an SSE stream
or a JSON response. A redirect, an empty 200 or an HTML page used to wait out the whole client
timeout and then say "timed out"; now the error names the status, content type and first bytes.
"""

from __future__ import annotations

import json

import anyio
import pytest
from test_http_client import Exchange, FakeServer, init_result, serving

from mcpkit import MCPError
from mcpkit.client import connect_http

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

HTML = b"<!doctype html><html><body>Sign in to continue</body></html>"


async def redirect(x: Exchange) -> None:
    await x.start(307, "text/plain", location="https://login.example/sso")
    await x.end(b"moved")


async def empty(x: Exchange) -> None:
    await x.start(200, "application/json")
    await x.end()


async def html(x: Exchange) -> None:
    await x.start(200, "text/html; charset=utf-8")
    await x.end(HTML)


async def other_json(x: Exchange) -> None:
    await x.json(200, {"status": "ok"})


async def no_content(x: Exchange) -> None:
    await x.start(204, "text/plain")
    await x.end()


ANSWERS = {
    "redirect": (redirect, r"HTTP 307 .*, redirecting to https://login.example/sso \(not followed\)"),
    "empty 200": (empty, r"HTTP 200 OK \(application/json\): .*an empty body"),
    "HTML 200": (html, r"HTTP 200 OK \(text/html; charset=utf-8\).*'<!doctype html><html><body>Sign in"),
    "other JSON": (other_json, r"not a JSON-RPC response to it; the body starts '\{\"status\": \"ok\"\}'"),
    "204": (no_content, r"HTTP 204 No Content"),
}


@pytest.mark.parametrize("kind", list(ANSWERS))
async def test_a_call_answered_with_no_mcp_answer_fails_at_once_naming_it(kind: str) -> None:
    answer, expected = ANSWERS[kind]

    async def handler(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return False
        await answer(x)
        return True

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=30, era="handshake") as client:
        with anyio.fail_after(5), pytest.raises(MCPError, match=expected):
            await client.call_tool("t", {})
        await client.ping()  # the session goes on


@pytest.mark.parametrize("kind", ["redirect", "HTML 200"])
async def test_connecting_to_a_url_that_answers_no_mcp_fails_at_once_naming_it(kind: str) -> None:
    answer, expected = ANSWERS[kind]

    async def handler(x: Exchange) -> bool:
        if x.method == "POST":
            await answer(x)
            return True
        return False

    async with serving(FakeServer(handler)) as url:
        with anyio.fail_after(5), pytest.raises(MCPError, match=expected):
            async with connect_http(url, timeout=30, era="handshake"):
                pass


async def test_a_json_rpc_error_with_a_null_id_is_the_calls_error() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return False
        await x.json(200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        return True

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=30, era="handshake") as client:
        with anyio.fail_after(5), pytest.raises(MCPError, match="Parse error") as info:
            await client.call_tool("t", {})
    assert info.value.code == -32700


async def test_an_http_sse_message_post_answered_with_a_redirect_fails_at_once() -> None:
    stream: list[Exchange] = []

    async def handler(x: Exchange) -> bool:
        if x.method == "GET":
            stream.append(x)
            await x.start(200)
            await x.raw("event: endpoint\ndata: /messages\n\n")
            with anyio.move_on_after(10):
                await anyio.sleep_forever()
            await x.end()
        elif x.path == "/mcp":
            await x.json(405, {"error": "not here"})
        elif x.message.get("method") == "tools/call":
            await redirect(x)
        else:
            await x.start(202, "text/plain")
            await x.end()
            if "id" in x.message:
                reply = json.dumps(init_result(x.message["id"], "2024-11-05"))
                await stream[0].raw(f"event: message\ndata: {reply}\n\n")
        return True

    async with serving(FakeServer(handler, session=None)) as url, connect_http(url, timeout=30) as client:
        assert client.protocol == "2024-11-05"
        with anyio.fail_after(5), pytest.raises(MCPError, match=ANSWERS["redirect"][1]):
            await client.call_tool("t", {})
