"""Streamable HTTP with json_response=True: JSON where it can carry the whole answer, SSE where a request
asked for more than its response (real uvicorn)."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from test_http_server import call, events, make_server, open_session, rpc, running, serving
from test_http_stateless import make_server as make_stateless_server
from test_http_stateless import meta, request

from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


async def test_in_json_mode_a_listen_request_is_still_answered_as_an_open_sse_stream() -> None:
    server = make_stateless_server()
    app = StreamableHTTPApp(server, json_response=True)
    async with running(app) as url, httpx.AsyncClient(timeout=5) as http:
        hdrs, body = request(9, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        with anyio.fail_after(5):  # used to wait forever for a response that a listen never sends
            async with http.stream("POST", url, content=body, headers=hdrs) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                decoder, frames = SSEDecoder(), []
                async for chunk in response.aiter_bytes():
                    frames += [json.loads(e.data) for e in decoder.feed(chunk) if e.data]
                    if frames:
                        break
    assert frames[0]["method"] == "notifications/subscriptions/acknowledged"


async def test_in_json_mode_a_stateless_request_asking_for_logs_gets_them_on_sse() -> None:
    app = StreamableHTTPApp(make_stateless_server(), json_response=True)
    async with running(app) as url, httpx.AsyncClient(timeout=5) as http:
        hdrs, body = request(2, "tools/call", {"name": "chatty", "arguments": {}})
        quiet = await http.post(url, content=body, headers=hdrs)
        loud_body = json.loads(body)
        loud_body["params"]["_meta"] = meta(logLevel="info")
        loud = await http.post(url, content=json.dumps(loud_body).encode(), headers=hdrs)
    assert quiet.headers["content-type"] == "application/json"
    frames = [json.loads(e.data) for e in SSEDecoder().feed(loud.content) if e.data]
    assert [f.get("method") for f in frames] == ["notifications/message", None]


async def test_in_json_mode_a_request_with_a_progress_token_gets_its_progress_on_sse(hosting: str) -> None:
    async with serving(hosting, json_response=True) as (client, url, _, _):
        headers = await open_session(client, url, {"logging": {}})
        plain = await client.post(url, content=call(1, "add", {"a": 1, "b": 2}), headers=headers)
        response = await client.post(
            url, content=call(2, "chatty", meta={"progressToken": "t"}), headers=headers
        )
    assert plain.headers["content-type"] == "application/json"
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = events(response.content)
    progress = [f for f in frames if f.get("method") == "notifications/progress"]
    assert progress and progress[0]["params"]["progressToken"] == "t"
    assert frames[-1]["id"] == 2 and frames[-1]["result"]["content"][0]["text"] == "done"


async def test_in_json_mode_a_cancelled_requests_post_ends_as_an_empty_stream_and_the_session_lives(
    hosting: str,
) -> None:
    async with serving(hosting, json_response=True) as (client, url, _, _):
        headers = await open_session(client, url)
        answers: list[httpx.Response] = []

        async def waiting() -> None:
            answers.append(await client.post(url, content=call(7, "wait"), headers=headers))

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)  # the call is running
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
            assert (
                await client.post(url, content=json.dumps(cancel).encode(), headers=headers)
            ).status_code == 202
        ping = await client.post(url, content=rpc(8, "ping"), headers=headers)
    (answer,) = answers
    assert answer.status_code == 200 and answer.headers["content-type"] == "text/event-stream"
    assert answer.content == b""
    assert ping.status_code == 200 and ping.json()["id"] == 8


async def test_a_request_without_a_session_is_told_to_initialize_first() -> None:
    async with (
        running(StreamableHTTPApp(make_server(), json_response=True)) as url,
        httpx.AsyncClient() as http,
    ):
        response = await http.post(url, content=call(1, "add", {"a": 1, "b": 2}), headers=HEADERS)
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "'tools/call' carries no Mcp-Session-Id header" in message and "send initialize first" in message


async def test_in_json_mode_a_request_whose_session_is_deleted_meanwhile_gets_404(hosting: str) -> None:
    async with serving(hosting, json_response=True) as (client, url, _, _):
        headers = await open_session(client, url)
        answers: list[httpx.Response] = []

        async def waiting() -> None:
            answers.append(await client.post(url, content=call(7, "wait"), headers=headers))

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            assert (await client.delete(url, headers=headers)).status_code == 204
    (answer,) = answers
    assert answer.status_code == 404 and answer.json()["error"]["code"] == -32001
