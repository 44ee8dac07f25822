"""Streamable HTTP client (transports "Streamable HTTP" 2025-11-25): resumption, session renewal.

The peers are real: mcpkit's StreamableHTTPApp, or a scriptable ASGI fake (FakeServer, also used by
test_http_client_errors.py) over a real uvicorn, so every byte crosses a socket.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest

import peers
from mcpkit import MCPError, Server
from mcpkit.client import connect_http
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
JSON = dict[str, Any]
VERSION = "2025-11-25"
SESSION = "fake-session"


class Exchange:
    """One HTTP request to the fake: its method, headers, JSON body; helpers to answer it."""

    def __init__(self, scope: dict[str, Any], body: bytes, send: Send) -> None:
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.message: JSON = json.loads(body) if body else {}
        self._send = send

    async def json(self, status: int, payload: Any, **headers: str) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        await self.start(status, "application/json", **headers)
        await self.end(body)

    async def start(self, status: int, kind: str = "text/event-stream", **headers: str) -> None:
        pairs = [(b"content-type", kind.encode())]
        pairs += [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
        await self._send({"type": "http.response.start", "status": status, "headers": pairs})

    async def event(self, data: str = "", *, event_id: str | None = None, retry: int | None = None) -> None:
        text = (f"id: {event_id}\n" if event_id else "") + (f"retry: {retry}\n" if retry is not None else "")
        text += f"data: {data}\n\n"
        await self._send({"type": "http.response.body", "body": text.encode(), "more_body": True})

    async def raw(self, text: str) -> None:
        await self._send({"type": "http.response.body", "body": text.encode(), "more_body": True})

    async def end(self, body: bytes = b"") -> None:
        await self._send({"type": "http.response.body", "body": body, "more_body": False})


Handler = Callable[[Exchange], Awaitable[bool]]


def init_result(rid: Any, version: str = VERSION) -> JSON:
    caps = {"tools": {"listChanged": True}}
    result = {
        "protocolVersion": version,
        "capabilities": caps,
        "serverInfo": {"name": "fake", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def tool_result(rid: Any, text: str) -> JSON:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}


class FakeServer:
    """Answers initialize and notifications itself; `handler` gets every other exchange first.

    A handler returns True when it answered. Unanswered GETs get 405, pings `{}`, other requests -32601.
    """

    def __init__(self, handler: Handler | None = None, *, session: str | None = SESSION) -> None:
        self.handler = handler
        self.session = session
        self.seen: list[Exchange] = []

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            part = await receive()
            body += part.get("body", b"")
            if not part.get("more_body"):
                break
        exchange = Exchange(scope, body, send)
        self.seen.append(exchange)
        if self.handler is not None and await self.handler(exchange):
            return
        await self.default(exchange)

    async def default(self, x: Exchange) -> None:
        headers = {"mcp_session_id": self.session} if self.session else {}
        method = x.message.get("method")
        if x.method != "POST":
            await x.json(405, {"error": "no GET stream"})
        elif method == "initialize":
            await x.json(200, init_result(x.message["id"]), **headers)
        elif "id" not in x.message:
            await x.start(202, "application/json")
            await x.end()
        elif method == "ping":
            await x.json(200, {"jsonrpc": "2.0", "id": x.message["id"], "result": {}})
        else:  # as a 2025-11-25 server answers what it does not know (server/discover, say)
            error = {"code": -32601, "message": f"Method not found: {method}"}
            await x.json(200, {"jsonrpc": "2.0", "id": x.message["id"], "error": error})

    def requests(self, method: str) -> list[Exchange]:
        return [x for x in self.seen if x.message.get("method") == method]


def serving(app: Any, path: str = "/mcp") -> Any:
    return peers.serving(app, path, lifespan="auto")


# ---- a stream that drops before its response is resumed --------------------------------------


async def test_a_post_stream_dropped_before_its_response_is_resumed_by_a_get_with_last_event_id() -> None:
    state: JSON = {}

    async def handler(x: Exchange) -> bool:
        if x.message.get("method") == "tools/call":
            state["rid"] = x.message["id"]
            await x.start(200, mcp_session_id=SESSION)
            await x.event(event_id="e1", retry=300)  # priming: an id and a retry, no data
            state["closed"] = anyio.current_time()
            await x.end()
            return True
        if x.method == "GET" and "last-event-id" in x.headers:
            state["waited"] = anyio.current_time() - state["closed"]
            await x.start(200)
            await x.event(json.dumps(tool_result(state["rid"], "resumed")), event_id="e2")
            await x.end()
            return True
        return False

    fake = FakeServer(handler)
    async with serving(fake) as url, connect_http(url, timeout=5) as client:
        result = await client.call_tool("t", {})
    assert result["content"][0]["text"] == "resumed"
    resumes = [x for x in fake.seen if x.method == "GET" and "last-event-id" in x.headers]
    assert [x.headers["last-event-id"] for x in resumes] == ["e1"]
    assert resumes[0].headers["mcp-session-id"] == SESSION
    assert 0.28 <= state["waited"] < 1.0  # the server's retry (300 ms), not the 1 s default


async def test_a_post_stream_that_ends_without_an_event_id_fails_its_request_at_once() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") == "tools/call":
            await x.start(200)
            await x.end()
            return True
        return False

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=10) as client:
        with anyio.fail_after(3), pytest.raises(MCPError, match="closed before the response"):
            await client.call_tool("t", {})


async def test_the_standalone_get_stream_reconnects_with_last_event_id_after_retry() -> None:
    notes: list[str] = []
    times: list[float] = []

    async def handler(x: Exchange) -> bool:
        if x.method != "GET":
            return False
        times.append(anyio.current_time())
        await x.start(200)
        if "last-event-id" not in x.headers:
            await x.event(event_id="g1", retry=300)
        else:
            note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            await x.event(json.dumps(note), event_id=x.headers["last-event-id"] + "+")
            await anyio.sleep(5)
        await x.end()
        return True

    fake = FakeServer(handler)
    async with serving(fake) as url, connect_http(url, on_notification=lambda m, p: notes.append(m)):
        with anyio.fail_after(3):
            while not notes:
                await anyio.sleep(0.02)
    assert notes == ["notifications/tools/list_changed"]
    gets = [x.headers.get("last-event-id") for x in fake.seen if x.method == "GET"]
    assert gets[:2] == [None, "g1"]
    assert times[1] - times[0] >= 0.28  # the server's retry, before reconnecting


async def test_a_server_that_closes_each_resumed_stream_is_polled_until_the_response() -> None:
    state: JSON = {"gets": 0}

    async def handler(x: Exchange) -> bool:
        if x.message.get("method") == "tools/call":
            state["rid"] = x.message["id"]
            await x.start(200)
            await x.event(event_id="p0", retry=30)
            await x.end()
            return True
        if x.method == "GET" and "last-event-id" in x.headers:
            state["gets"] += 1
            await x.start(200)
            n = state["gets"]
            if n < 6:  # "poll": a fresh id, then the connection closes again
                await x.event(event_id=f"p{n}")
            else:
                await x.event(json.dumps(tool_result(state["rid"], f"after {n} polls")), event_id=f"p{n}")
            await x.end()
            return True
        return False

    fake = FakeServer(handler)
    async with serving(fake) as url, connect_http(url, timeout=5, reconnect_attempts=3) as client:
        assert (await client.call_tool("t", {}))["content"][0]["text"] == "after 6 polls"
    ids = [x.headers["last-event-id"] for x in fake.seen if "last-event-id" in x.headers]
    assert ids == ["p0", "p1", "p2", "p3", "p4", "p5"]


async def test_a_cancelled_request_is_not_resumed() -> None:
    async def handler(x: Exchange) -> bool:
        if x.message.get("method") == "tools/call":
            await x.start(200)
            await x.event(event_id="c0", retry=400)
            await x.end()
            return True
        return False

    fake = FakeServer(handler)
    async with serving(fake) as url, connect_http(url, timeout=5) as client:
        with pytest.raises(MCPError):
            await client.call_tool("t", {}, timeout=0.1)  # times out, so the client cancels it
        await anyio.sleep(0.6)
    assert fake.requests("notifications/cancelled")
    assert not [x for x in fake.seen if "last-event-id" in x.headers]


# ---- a 404 for the session id: a new session, or a clear error --------------------------------


def adder() -> Server:
    server = Server("renewal")

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    return server


async def end_session(url: str, session_id: str) -> None:
    headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": VERSION}
    async with httpx.AsyncClient() as http:
        assert (await http.delete(url, headers=headers)).status_code in (200, 204)


async def test_after_the_server_ends_the_session_the_next_call_starts_a_new_one_and_succeeds() -> None:
    app = StreamableHTTPApp(adder())
    async with serving(app) as url, connect_http(url, timeout=5, era="handshake") as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"
        first = client.stream.session_id  # type: ignore[attr-defined]
        await end_session(url, first)
        assert (await client.call_tool("add", {"a": 2, "b": 3}))["content"][0]["text"] == "5"
        second = client.stream.session_id  # type: ignore[attr-defined]
        assert second and second != first
        assert list(app.sessions) == [second]


async def test_with_reconnect_on_404_off_an_ended_session_is_a_clear_error() -> None:
    app = StreamableHTTPApp(adder())
    async with (
        serving(app) as url,
        connect_http(url, timeout=5, reconnect_on_404=False, era="handshake") as client,
    ):
        await end_session(url, client.stream.session_id)  # type: ignore[attr-defined]
        with (
            anyio.fail_after(3),
            pytest.raises(MCPError, match=r"ended session .*404.*reconnect_on_404 is off"),
        ):
            await client.call_tool("add", {"a": 1, "b": 2})


async def test_concurrent_calls_that_all_meet_the_404_share_one_new_session() -> None:
    app = StreamableHTTPApp(adder())
    async with serving(app) as url, connect_http(url, timeout=5, era="handshake") as client:
        await end_session(url, client.stream.session_id)  # type: ignore[attr-defined]
        results: list[str] = []

        async def call(n: int) -> None:
            results.append((await client.call_tool("add", {"a": n, "b": 0}))["content"][0]["text"])

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(call, n)
        assert sorted(results) == ["0", "1", "2", "3", "4"]
        assert len(app.sessions) == 1
