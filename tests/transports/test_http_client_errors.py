"""Streamable HTTP client failures: each ends the call with a readable error, never a hang.

Refused connections, TLS failures, 401/403, timeouts, oversized answers, and the fallback to the
2024-11-05 HTTP+SSE transport (against a scripted peer; tests/interop has the official SDK's).
"""

from __future__ import annotations

import json

import anyio
import pytest
from test_http_client import Exchange, FakeServer, init_result, serving, tool_result

from mcpkit import Client, MCPError
from mcpkit.client import connect_http
from mcpkit.transports.http_client import open_http_stream
from peers import free_port

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


async def test_a_refused_connection_is_a_clear_error_at_once() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with anyio.fail_after(5), pytest.raises(MCPError, match=r"cannot connect to .*is the server running"):
        async with connect_http(url, timeout=5):
            pass


async def test_tls_to_a_plain_http_port_is_a_clear_tls_error() -> None:
    async with serving(FakeServer()) as url:
        with anyio.fail_after(5), pytest.raises(MCPError, match="TLS handshake with https://"):
            async with connect_http(url.replace("http://", "https://"), timeout=5):
                pass


@pytest.mark.parametrize(
    ("status", "expected"),
    [(401, r"HTTP 401 .*wants credentials \(WWW-Authenticate: Bearer\)"), (403, "HTTP 403 .*refused")],
)
async def test_401_and_403_say_what_the_server_wants(status: int, expected: str) -> None:
    async def handler(x: Exchange) -> bool:
        await x.json(status, {"error": "no"}, www_authenticate="Bearer")
        return True

    async with serving(FakeServer(handler)) as url:
        with anyio.fail_after(5), pytest.raises(MCPError, match=expected):
            async with connect_http(url, timeout=5):
                pass


async def test_a_server_that_never_answers_is_a_timeout_error_from_the_transport() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return False
        await anyio.sleep(10)
        return True

    async with (
        serving(FakeServer(handler)) as url,
        open_http_stream(url, timeout=0.5) as stream,
        Client(stream, timeout=20) as client,
    ):
        with anyio.fail_after(5), pytest.raises(MCPError, match="timed out"):
            await client.call_tool("t", {})


async def test_a_json_answer_over_max_message_fails_its_request() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return False
        await x.json(200, tool_result(x.message["id"], "x" * 5000))
        return True

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=5, max_message=2000) as client:
        with anyio.fail_after(5), pytest.raises(MCPError, match="exceeds the 2000-byte limit"):
            await client.call_tool("t", {})


async def test_an_sse_event_over_max_message_fails_its_request() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return False
        await x.start(200)
        await x.event(json.dumps(tool_result(x.message["id"], "x" * 5000)), event_id="1")
        await x.end()
        return True

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=5, max_message=2000) as client:
        with anyio.fail_after(5), pytest.raises(MCPError, match="exceeds the 2000-byte limit"):
            await client.call_tool("t", {})


async def test_an_endless_error_body_is_cut_short_not_read_to_the_end() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") != "tools/call":
            return False
        await x.start(500, "text/plain")
        while True:  # an error page that never ends
            await x.raw("e" * 10_000)
            await anyio.sleep(0.01)

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=5) as client:
        with anyio.fail_after(3), pytest.raises(MCPError, match="HTTP 500") as info:
            await client.call_tool("t", {})
    assert len(info.value.message) < 1000


async def test_a_body_answering_a_notification_is_ignored_not_answered_back() -> None:
    async def handler(x: Exchange) -> bool:
        if x.method == "POST" and "id" not in x.message:  # as the suite's `initialize` mock does
            await x.json(200, {"jsonrpc": "2.0", "result": {}})
            return True
        return False

    fake = FakeServer(handler)
    async with serving(fake) as url, connect_http(url, timeout=5) as client:
        await client.ping()
        await anyio.sleep(0.3)
    assert [x.message for x in fake.seen if "error" in x.message] == []


# ---- a 2024-11-05 server: initialize refused with 400/404/405 -> HTTP+SSE ----------------------


def legacy_peer(refusal: int, hang_up_on: str | None = None) -> FakeServer:
    """A 2024-11-05 server at /mcp: POST there is refused; GET opens the stream that names /messages.

    A request for `hang_up_on` ends the stream instead of being answered.
    """
    box: dict[str, Exchange] = {}
    hang_up = anyio.Event()

    async def handler(x: Exchange) -> bool:
        if x.method == "POST" and x.path == "/mcp":
            await x.json(refusal, {"error": "not here"})
        elif x.method == "GET":
            box["stream"] = x
            await x.start(200)
            await x.raw("event: endpoint\ndata: /messages?s=1\n\n")
            with anyio.move_on_after(30):
                await hang_up.wait()
            await x.end()
        else:  # POST /messages: accepted, answered on the stream
            await x.start(202, "text/plain")
            await x.end()
            rid, method = x.message.get("id"), x.message.get("method")
            if method == hang_up_on:
                hang_up.set()
            elif rid is not None:
                assert isinstance(method, str)  # the client sends this peer requests only
                reply = init_result(rid, "2024-11-05") if method == "initialize" else tool_result(rid, method)
                await box["stream"].raw(f"event: message\ndata: {json.dumps(reply)}\n\n")
        return True

    return FakeServer(handler, session=None)


@pytest.mark.parametrize("refusal", [400, 404, 405])
async def test_an_initialize_refused_with_400_404_or_405_falls_back_to_http_sse(refusal: int) -> None:
    fake = legacy_peer(refusal)
    async with serving(fake) as url, connect_http(url, timeout=5) as client:
        assert client.protocol == "2024-11-05"
        assert (await client.call_tool("t", {}))["content"][0]["text"] == "tools/call"
    initialize = [x.path for x in fake.requests("initialize")]
    assert initialize == ["/mcp", "/messages"]  # refused at the Streamable endpoint, then resent
    assert {x.path for x in fake.requests("tools/call")} == {"/messages"}


async def test_with_legacy_fallback_off_a_refused_initialize_is_the_http_error() -> None:
    async with serving(legacy_peer(405)) as url:
        with anyio.fail_after(5), pytest.raises(MCPError, match="HTTP 405") as info:
            async with connect_http(url, timeout=5, legacy_fallback=False):
                pass
    assert "HTTP+SSE" not in info.value.message


async def test_a_url_that_is_neither_transport_says_both_failed() -> None:
    async def handler(x: Exchange) -> bool:
        await x.json(404, {"error": "nothing here"})
        return True

    async with serving(FakeServer(handler)) as url:
        with (
            anyio.fail_after(5),
            pytest.raises(MCPError, match=r"HTTP 404 .*nor is it a 2024-11-05 HTTP\+SSE"),
        ):
            async with connect_http(url, timeout=5):
                pass


async def test_when_the_http_sse_stream_ends_pending_requests_fail_at_once() -> None:
    async with (
        serving(legacy_peer(405, hang_up_on="tools/call")) as url,
        connect_http(url, timeout=10) as client,
    ):
        with anyio.fail_after(3), pytest.raises(MCPError):
            await client.call_tool("t", {})
