"""Three uvicorn worker processes on one real redis-server, behind haproxy balancing round robin per
request (no stickiness): both SDK clients work through it, a worker killed with SIGKILL loses nothing
that was stored, and a Redis restart is a clear error followed by recovery.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from cluster.parts import Cluster, RedisProcess, cluster, redis_server
from mcpkit.client import connect_http
from mcpkit.protocol.sse import SSEDecoder
from messages import HEADERS

pytestmark = pytest.mark.anyio
warnings.filterwarnings("ignore", category=UserWarning)
VERSION = "2025-11-25"


@contextmanager
def redis_cluster(
    tmp_path: Path, n: int = 3, appendonly: bool = False
) -> Iterator[tuple[Cluster, RedisProcess]]:
    env = {"MCPKIT_REDIS_URL": "", "MCPKIT_TEST_DIR": str(tmp_path)}
    with (
        redis_server(tmp_path, appendonly=appendonly) as redis,
        cluster(n, env={**env, "MCPKIT_REDIS_URL": redis.url}, tmp_dir=tmp_path) as workers,
    ):
        yield workers, redis


async def elicited(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"n": "ada"}}


async def sampled(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


async def test_mcpkit_client_through_round_robin_haproxy(tmp_path: Path) -> None:
    notes: list[str] = []

    async def on_notification(method: str, params: Any) -> None:
        notes.append(method)

    options: dict[str, Any] = {
        "elicitation": elicited,
        "sampling": sampled,
        "on_notification": on_notification,
    }
    with redis_cluster(tmp_path) as (workers, _):
        async with connect_http(workers.url, protocol_version=VERSION, **options) as client:
            names = {(await client.call_tool("whoami"))["content"][0]["text"] for _ in range(6)}
            assert names == {"w1", "w2", "w3"}
            assert (await client.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
            assert (await client.call_tool("ask"))["content"][0]["text"] == "{'n': 'ada'} / hi"
            progress: list[float] = []
            done = await client.call_tool("slow", {"n": 3}, on_progress=lambda p, t, m: progress.append(p))
            assert done["structuredContent"] == {"result": 3} and progress == [1, 2, 3]
            await client.subscribe("mem://note")
            for _ in range(3):  # each touch from whichever worker the call lands on
                await client.call_tool("touch", {"uri": "mem://note"})
            await client.call_tool("grow", {"name": "fresh"})
            with anyio.fail_after(5):
                while notes.count("notifications/resources/updated") < 3 or not notes.count(
                    "notifications/tools/list_changed"
                ):
                    await anyio.sleep(0.05)
            with anyio.move_on_after(0.6):  # the cancel goes to another worker than the call's
                await client.call_tool("slow", {"n": 1000, "delay": 0.01})
            with anyio.fail_after(5):
                while not list(tmp_path.glob("cancelled-*")):
                    await anyio.sleep(0.05)
            assert len(list(tmp_path.glob("cancelled-*"))) == 1


@asynccontextmanager
async def sdk_session(url: str, answers: dict[str, list[Any]]) -> AsyncIterator[ClientSession]:
    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        answers["sampling"].append(params)
        content = types.TextContent(type="text", text="hi")
        return types.CreateMessageResult(role="assistant", content=content, model="m")

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        answers["elicitation"].append(params)
        return types.ElicitResult(action="accept", content={"n": "ada"})

    async def messages(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            answers["notifications"].append(method)

    async with (
        streamable_http_client(url) as streams,
        ClientSession(
            streams[0],
            streams[1],
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            message_handler=messages,
        ) as session,
    ):
        await session.initialize()
        yield session


async def test_the_official_sdk_client_through_round_robin_haproxy(tmp_path: Path) -> None:
    answers: dict[str, list[Any]] = {"sampling": [], "elicitation": [], "notifications": []}
    with redis_cluster(tmp_path) as (workers, _):
        async with sdk_session(workers.url, answers) as session:
            assert session.protocol_version == VERSION
            names = set()
            for _ in range(6):
                result = await session.call_tool("whoami", {})
                names.add(result.content[0].text)  # type: ignore[union-attr]
            assert names == {"w1", "w2", "w3"}
            added = await session.call_tool("add", {"a": 2, "b": 3})
            assert added.structured_content == {"result": 5}
            asked = await session.call_tool("ask", {})
            assert asked.content[0].text == "{'n': 'ada'} / hi"  # type: ignore[union-attr]
            reported: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                reported.append(progress)

            slow = await session.call_tool("slow", {"n": 3}, progress_callback=on_progress)
            assert slow.structured_content == {"result": 3} and reported == [1, 2, 3]
            await session.subscribe_resource("mem://note")
            for _ in range(3):
                await session.call_tool("touch", {"uri": "mem://note"})
            await session.call_tool("grow", {"name": "fresh"})
            heard = answers["notifications"]
            with anyio.fail_after(5):
                while heard.count("notifications/resources/updated") < 3 or not heard.count(
                    "notifications/tools/list_changed"
                ):
                    await anyio.sleep(0.05)
            with anyio.move_on_after(0.6):  # the SDK's courtesy notifications/cancelled
                await session.call_tool("slow", {"n": 1000, "delay": 0.01})
            with anyio.fail_after(5):
                while not list(tmp_path.glob("cancelled-*")):
                    await anyio.sleep(0.05)
    assert len(answers["sampling"]) == 1 and len(answers["elicitation"]) == 1


async def test_killing_the_worker_holding_the_get_stream_loses_no_event(tmp_path: Path) -> None:
    """200 standalone notifications from a handler on w2 while w1 holds the GET; w1 is killed midway;
    the client resumes through haproxy and has all 200, in order, none twice."""
    with redis_cluster(tmp_path) as (workers, _):
        async with httpx.AsyncClient(timeout=30) as http:
            session_id = await initialize(http, workers.workers.urls[0])
            headers = session_headers(session_id)
            got: list[int] = []
            last_id = ""
            async with anyio.create_task_group() as tg:
                body = call(5, "emit", {"n": 200, "delay": 0.01})
                tg.start_soon(lambda: http.post(workers.workers.urls[1], content=body, headers=headers))
                async with http.stream("GET", workers.workers.urls[0], headers=listen(headers)) as stream:
                    assert stream.headers["x-mcpkit-worker"] == "w1"
                    decoder = SSEDecoder()
                    async for chunk in stream.aiter_bytes():
                        for event in decoder.feed(chunk):
                            if event.data:
                                got.append(json.loads(event.data)["params"]["data"])
                                last_id = event.id or ""
                        if len(got) >= 60:
                            workers.workers.kill(0)
                            break
            assert not workers.workers.alive(0)
            async with http.stream(
                "GET", workers.url, headers={**listen(headers), "last-event-id": last_id}
            ) as again:
                assert again.status_code == 200 and again.headers["x-mcpkit-worker"] != "w1"
                decoder = SSEDecoder()
                with anyio.fail_after(10):
                    async for chunk in again.aiter_bytes():
                        for event in decoder.feed(chunk):
                            if event.data:
                                got.append(json.loads(event.data)["params"]["data"])
                        if len(got) >= 200:
                            break
    assert got == list(range(200))


async def test_killing_the_worker_running_a_request_ends_its_stream_with_an_error(tmp_path: Path) -> None:
    with redis_cluster(tmp_path) as (workers, _):
        async with httpx.AsyncClient(timeout=30) as http:
            session_id = await initialize(http, workers.workers.urls[0])
            headers = session_headers(session_id)
            seen: list[dict[str, Any]] = []
            last_id = ""
            body = call(9, "slow", {"n": 100, "delay": 0.05}, progress=True)
            async with http.stream("POST", workers.workers.urls[0], content=body, headers=headers) as stream:
                decoder = SSEDecoder()
                async for chunk in stream.aiter_bytes():
                    for event in decoder.feed(chunk):
                        last_id = event.id or last_id
                        if event.data:
                            seen.append(json.loads(event.data))
                    if len(seen) >= 3:
                        workers.workers.kill(0)
                        break
            rest: list[dict[str, Any]] = []
            with anyio.fail_after(15):
                async with http.stream(
                    "GET", workers.url, headers={**listen(headers), "last-event-id": last_id}
                ) as again:
                    assert again.status_code == 200
                    decoder = SSEDecoder()
                    async for chunk in again.aiter_bytes():
                        rest.extend(json.loads(e.data) for e in decoder.feed(chunk) if e.data)
            progress = [m["params"]["progress"] for m in seen + rest if "method" in m]
            assert progress == list(range(1, len(progress) + 1))  # in order, none twice
            assert rest[-1]["id"] == 9 and rest[-1]["error"]["data"] == {"reason": "worker_lost"}
            after = await http.post(workers.url, content=call(10, "add", {"a": 1, "b": 1}), headers=headers)
            assert after.status_code == 200 and b'"result":2' in after.content


async def test_a_redis_restart_is_a_clear_error_then_the_sessions_go_on(tmp_path: Path) -> None:
    with redis_cluster(tmp_path, appendonly=True) as (workers, redis):
        async with httpx.AsyncClient(timeout=30) as http:
            session_id = await initialize(http, workers.url)
            headers = session_headers(session_id)
            redis.stop()
            down = await http.post(workers.url, content=call(2, "add", {"a": 1, "b": 2}), headers=headers)
            assert down.status_code == 503 and "retry-after" in down.headers
            assert "Redis" in down.json()["error"]["message"]
            redis.start()
            with anyio.fail_after(10):
                while True:
                    again = await http.post(
                        workers.url, content=call(3, "add", {"a": 1, "b": 2}), headers=headers
                    )
                    if again.status_code == 200:
                        break
                    await anyio.sleep(0.2)
            assert b'"result":3' in again.content
            for rid in range(4, 7):  # every worker serves the session again
                answered = await http.post(
                    workers.url, content=call(rid, "add", {"a": 1, "b": 1}), headers=headers
                )
                assert answered.status_code == 200 and b'"result":2' in answered.content


# ---- raw HTTP helpers ------------------------------------------------------------------------


def session_headers(session_id: str) -> dict[str, str]:
    return {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": VERSION}


def listen(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "accept": "text/event-stream"}


def call(rid: int, name: str, arguments: dict[str, Any], progress: bool = False) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress:
        params["_meta"] = {"progressToken": "t"}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode()


async def initialize(http: httpx.AsyncClient, url: str) -> str:
    params = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode()
    response = await http.post(url, content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert (await http.post(url, content=note, headers=session_headers(session_id))).status_code == 202
    return session_id
