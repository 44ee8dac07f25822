"""Streamable HTTP server (transports "Streamable HTTP"): httpx over a real server with ASGI lifespan
(uvicorn on asyncio, hypercorn on trio), or driving the app in this process without one; on either loop."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

import peers
from in_process import ORIGIN, in_process
from mcpkit import Context, Server
from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS, VERSION, initialize_params

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def make_server() -> Server:
    server = Server("http-test")

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.log("info", "working")
        await ctx.report_progress(1, 2)
        return "done"

    @server.tool()
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("name?", schema)
        return f"{answer.action}:{(answer.content or {}).get('name')}"

    @server.tool()
    async def wait() -> str:
        await anyio.sleep_forever()
        return "never"

    return server


def running(app: StreamableHTTPApp) -> Any:
    """A real uvicorn (with lifespan) on a free 127.0.0.1 port; yields the endpoint URL."""
    return peers.serving(app)


def rpc(rid: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}).encode()


def events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in SSEDecoder().feed(body) if e.data]  # skip the priming event


def init_body(capabilities: dict[str, Any] | None = None, version: str = VERSION) -> bytes:
    return rpc(0, "initialize", initialize_params(version, capabilities))


async def open_session(
    client: httpx.AsyncClient, url: str, capabilities: dict[str, Any] | None = None, version: str = VERSION
) -> dict[str, str]:
    """Initialize, send notifications/initialized; return the headers later requests carry."""
    response = await client.post(url, content=init_body(capabilities, version), headers=HEADERS)
    assert response.status_code == 200
    headers = {
        **HEADERS,
        "mcp-session-id": response.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert (await client.post(url, content=note, headers=headers)).status_code == 202
    return headers


@asynccontextmanager
async def serving(
    hosting: str, **options: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, str, StreamableHTTPApp, Server]]:
    server = make_server()
    app = StreamableHTTPApp(server, **options)
    with anyio.fail_after(20):
        async with hosted(hosting, app) as (client, url):
            yield client, url, app, server


@asynccontextmanager
async def hosted(hosting: str, app: Any, timeout: float = 5) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """`app` on a real server and an httpx client to it, or an httpx client driving it in this process
    (`hosting`: "socket" or "in-process"); yields the client and the endpoint URL."""
    if hosting == "in-process":
        async with in_process(app, timeout) as client:
            yield client, ORIGIN + "/mcp"
        return
    async with running(app) as url, httpx.AsyncClient(timeout=timeout) as client:
        yield client, url


def call(
    rid: int, name: str, args: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": args or {}}
    if meta:
        params["_meta"] = meta
    return rpc(rid, "tools/call", params)


async def test_initialize_returns_a_session_id_and_the_result_as_sse(hosting: str) -> None:
    async with serving(hosting) as (client, url, app, _):
        response = await client.post(url, content=init_body(), headers=HEADERS)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["mcp-session-id"] in app.sessions
        (message,) = events(response.content)
        assert message["id"] == 0 and message["result"]["protocolVersion"] == VERSION


async def test_tools_call_answers_on_the_posts_sse_stream(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        response = await client.post(url, content=call(1, "add", {"a": 2, "b": 3}), headers=headers)
        (message,) = events(response.content)
        assert message["id"] == 1 and message["result"]["content"][0]["text"] == "5"


async def test_tools_call_in_json_mode_answers_with_application_json(hosting: str) -> None:
    async with serving(hosting, json_response=True) as (client, url, _, _):
        headers = await open_session(client, url)
        response = await client.post(url, content=call(1, "add", {"a": 2, "b": 3}), headers=headers)
        assert response.headers["content-type"] == "application/json"
        assert response.json()["result"]["content"][0]["text"] == "5"


async def test_without_lifespan_over_asgi_transport_sessions_still_work() -> None:
    app = StreamableHTTPApp(make_server(), json_response=True)
    transport = httpx.ASGITransport(app=app)
    try:
        with anyio.fail_after(10):
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
                headers = await open_session(client, "/mcp")
                response = await client.post(
                    "/mcp", content=call(1, "add", {"a": 1, "b": 1}), headers=headers
                )
                assert response.json()["result"]["content"][0]["text"] == "2"
    finally:
        await app.aclose()


async def test_a_notification_is_accepted_with_202_and_no_body(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}).encode()
        response = await client.post(url, content=note, headers=headers)
        assert response.status_code == 202 and response.content == b""


async def test_a_request_without_a_session_id_is_400_and_an_unknown_one_404(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        assert (await client.post(url, content=rpc(1, "ping"), headers=HEADERS)).status_code == 400
        unknown = {**HEADERS, "mcp-session-id": "nope"}
        response = await client.post(url, content=rpc(1, "ping"), headers=unknown)
        assert response.status_code == 404 and response.json()["error"]["code"] == -32001


async def test_after_delete_the_session_id_is_404(hosting: str) -> None:
    async with serving(hosting) as (client, url, app, _):
        headers = await open_session(client, url)
        assert (await client.delete(url, headers=headers)).status_code == 204
        assert headers["mcp-session-id"] not in app.sessions
        assert (await client.post(url, content=rpc(1, "ping"), headers=headers)).status_code == 404


async def test_bad_accept_content_type_and_protocol_version_are_406_415_400(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        accept = {**headers, "accept": "application/json"}
        assert (await client.post(url, content=rpc(1, "ping"), headers=accept)).status_code == 406
        ctype = {**headers, "content-type": "text/plain"}
        assert (await client.post(url, content=rpc(1, "ping"), headers=ctype)).status_code == 415
        version = {**headers, "mcp-protocol-version": "1999-01-01"}
        assert (await client.post(url, content=rpc(1, "ping"), headers=version)).status_code == 400
        absent = {k: v for k, v in headers.items() if k != "mcp-protocol-version"}
        assert (await client.post(url, content=rpc(1, "ping"), headers=absent)).status_code == 200


async def test_a_foreign_origin_is_403_and_a_foreign_host_421(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        origin = {**HEADERS, "origin": "https://evil.example"}
        assert (await client.post(url, content=init_body(), headers=origin)).status_code == 403
        local = {**HEADERS, "origin": "http://localhost:5173"}
        assert (await client.post(url, content=init_body(), headers=local)).status_code == 200
        host = {**HEADERS, "host": "evil.example"}
        assert (await client.post(url, content=init_body(), headers=host)).status_code == 421


async def test_an_oversized_body_is_413_whether_declared_or_streamed(hosting: str) -> None:
    async with serving(hosting, max_body=1000) as (client, url, _, _):
        big = rpc(1, "ping", {"pad": "x" * 2000})
        assert (await client.post(url, content=big, headers=HEADERS)).status_code == 413

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(big), 100):
                yield big[i : i + 100]

        assert (await client.post(url, content=chunks(), headers=HEADERS)).status_code == 413


async def test_a_body_not_completed_in_time_is_408() -> None:
    app = StreamableHTTPApp(make_server(), body_timeout=0.1)
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [
            (b"host", b"localhost"),
            (b"accept", HEADERS["accept"].encode()),
            (b"content-type", b"application/json"),
        ],
    }
    first = True

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": b"{", "more_body": True}
        await anyio.sleep_forever()
        raise AssertionError

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    with anyio.fail_after(5):
        await app(scope, receive, send)
    assert sent[0]["status"] == 408


async def test_invalid_json_is_400_with_a_parse_error_and_no_traceback(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        response = await client.post(url, content=b"{not json", headers=HEADERS)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32700
        assert "Traceback" not in response.text


async def test_log_and_progress_arrive_on_the_posts_stream_before_the_response(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        response = await client.post(
            url, content=call(1, "chatty", meta={"progressToken": "p"}), headers=headers
        )
        messages = events(response.content)
        assert [m.get("method") for m in messages] == [
            "notifications/message",
            "notifications/progress",
            None,
        ]
        assert messages[-1]["result"]["content"][0]["text"] == "done"


async def test_elicitation_goes_out_on_the_posts_stream_and_its_answer_is_posted_back(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url, {"elicitation": {}})
        decoder, seen = SSEDecoder(), []
        async with client.stream("POST", url, content=call(1, "ask"), headers=headers) as response:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if not event.data:
                        continue
                    message = json.loads(event.data)
                    seen.append(message)
                    if message.get("method") == "elicitation/create":
                        answer = {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "result": {"action": "accept", "content": {"name": "Ada"}},
                        }
                        posted = await client.post(url, content=json.dumps(answer).encode(), headers=headers)
                        assert posted.status_code == 202
        assert seen[0]["method"] == "elicitation/create"
        assert seen[-1]["result"]["content"][0]["text"] == "accept:Ada"


async def test_the_standalone_get_stream_receives_server_wide_notifications(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, server):
        headers = await open_session(client, url)
        get_headers = {**headers, "accept": "text/event-stream"}
        decoder = SSEDecoder()
        async with client.stream("GET", url, headers=get_headers) as response:
            assert response.status_code == 200
            assert (await client.get(url, headers=get_headers)).status_code == 409
            server.add_tool(lambda: "new", name="new")
            async for chunk in response.aiter_bytes():
                got = [e for e in decoder.feed(chunk) if e.data]
                if got:
                    assert json.loads(got[0].data)["method"] == "notifications/tools/list_changed"
                    break


async def test_abandoned_sessions_are_reaped_after_the_idle_timeout(hosting: str) -> None:
    async with serving(hosting, session_idle_timeout=0.2) as (client, url, app, _):
        ids = [(await open_session(client, url))["mcp-session-id"] for _ in range(20)]
        with anyio.fail_after(3):
            while app.sessions:
                await anyio.sleep(0.05)
        stale = {**HEADERS, "mcp-session-id": ids[0]}
        assert (await client.post(url, content=rpc(1, "ping"), headers=stale)).status_code == 404


async def test_at_max_sessions_a_new_initialize_is_503(hosting: str) -> None:
    async with serving(hosting, max_sessions=3) as (client, url, _app, _):
        headers = [await open_session(client, url) for _ in range(3)]
        response = await client.post(url, content=init_body(), headers=HEADERS)
        assert response.status_code == 503 and "Traceback" not in response.text
        assert (await client.delete(url, headers=headers[0])).status_code == 204
        assert (await client.post(url, content=init_body(), headers=HEADERS)).status_code == 200


async def test_sessionless_mode_serves_each_post_alone_without_session_ids(hosting: str) -> None:
    async with serving(hosting, sessionless=True, json_response=True) as (client, url, app, _):
        response = await client.post(url, content=call(1, "add", {"a": 4, "b": 5}), headers=HEADERS)
        assert "mcp-session-id" not in response.headers
        assert response.json()["result"]["content"][0]["text"] == "9"
        assert app.sessions == {}
        assert (await client.get(url, headers=HEADERS)).status_code == 405


async def test_sessionless_mode_streams_a_requests_messages_as_sse_too(hosting: str) -> None:
    async with serving(hosting, sessionless=True) as (client, url, _, _):
        response = await client.post(url, content=call(1, "chatty"), headers=HEADERS)
        messages = events(response.content)
        assert messages[0]["method"] == "notifications/message"
        assert messages[-1]["result"]["content"][0]["text"] == "done"


async def test_cancelling_a_request_ends_its_posts_stream_without_a_response(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        async with client.stream("POST", url, content=call(7, "wait"), headers=headers) as response:
            assert response.status_code == 200
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
            posted = await client.post(url, content=json.dumps(note).encode(), headers=headers)
            assert posted.status_code == 202
            assert events(await response.aread()) == []


async def test_the_app_mounts_inside_starlette_and_serves_mcpkit_client_there() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from mcpkit.client.client import Client
    from mcpkit.transports.http_client import HTTPClientStream

    mcp_app = StreamableHTTPApp(make_server(), json_response=True)
    app = Starlette(routes=[Mount("/tools", app=mcp_app)])
    transport = httpx.ASGITransport(app=app)
    try:
        with anyio.fail_after(10):
            async with (
                httpx.AsyncClient(transport=transport, base_url="http://localhost") as http,
                anyio.create_task_group() as tg,
            ):
                stream = HTTPClientStream("http://localhost/tools/mcp", http, tg)
                async with Client(stream) as client:
                    result = await client.call_tool("add", {"a": 20, "b": 22})
                await stream.aclose()
                tg.cancel_scope.cancel()
        assert result["content"][0]["text"] == "42"
    finally:
        await mcp_app.aclose()


async def test_sse_streams_open_with_a_priming_event_and_retry_from_2025_11_25(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        response = await client.post(url, content=call(1, "add", {"a": 1, "b": 1}), headers=headers)
        first = SSEDecoder().feed(response.content)[0]
        assert first.data == "" and first.id is not None and first.retry == 1000
        old = await open_session(client, url, version="2025-06-18")
        response = await client.post(url, content=call(2, "add", {"a": 1, "b": 1}), headers=old)
        assert SSEDecoder().feed(response.content)[0].data != ""


async def test_an_error_the_core_answers_itself_goes_back_on_its_own_post(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        response = await client.post(url, content=rpc(7, "no/such/method"), headers=headers)
        [reply] = events(response.content)
        assert reply["id"] == 7 and reply["error"]["code"] == -32601
