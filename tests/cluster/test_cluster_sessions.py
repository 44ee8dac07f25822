"""Handshake-era sessions served by any of three workers sharing one real Redis (mcpkit.cluster).

The workers are three StreamableHTTPApps, each with its own RedisBackplane, on three real uvicorn
servers in this process; a RotatingProxy sends every HTTP request to the next worker, so consecutive
requests of one session (its initialize, the answer to an elicitation, a resumption) never reach the
same worker. Being in one process lets a test reach a worker's Server directly (to publish a change
from that worker) and see what a handler saw. Killing a worker is in test_cluster_processes.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import cluster
from conftest import requirement
from mcpkit.client import connect_http
from mcpkit.protocol.resource_auth import AccessToken
from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server.asgi import AUTH_SCOPE_KEY
from messages import HEADERS, INITIALIZE, body

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


async def answer_elicitation(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"n": "ada"}}


async def answer_sampling(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}


async def test_every_request_of_a_session_is_served_wherever_it_lands(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, connect_http(workers.url, protocol_version=VERSION) as client:
        names = set()
        for i in range(6):
            result = await client.call_tool("add", {"a": i, "b": 1})
            assert result["structuredContent"] == {"result": i + 1}
            names.add((await client.call_tool("whoami"))["content"][0]["text"])
        assert names == {"w0", "w1", "w2"}  # one session, served by all three
        assert client.protocol == VERSION


async def test_an_elicitation_and_a_sampling_answered_on_other_workers_reach_the_handler(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers:
        options: dict[str, Any] = {"elicitation": answer_elicitation, "sampling": answer_sampling}
        async with connect_http(workers.url, protocol_version=VERSION, **options) as client:
            start = len(workers.proxy.hops)
            result = await client.call_tool("ask")
        assert result["content"][0]["text"] == "{'n': 'ada'} / hi"
        hops = workers.proxy.hops[start:]
        assert len(set(hops)) == 3  # the call and the two answers went to three different workers


async def test_progress_arrives_and_a_cancel_sent_to_another_worker_stops_the_handler(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers:
        async with connect_http(workers.url, protocol_version=VERSION) as client:
            progress: list[float] = []
            result = await client.call_tool("slow", {"n": 4}, on_progress=lambda p, t, m: progress.append(p))
            assert result["structuredContent"] == {"result": 4} and progress == [1, 2, 3, 4]
            seen = workers.seen
            with anyio.move_on_after(0.5):
                await client.call_tool("slow", {"n": 1000, "delay": 0.01})
            with anyio.fail_after(5):
                while not seen.cancelled:
                    await anyio.sleep(0.02)
        assert len(seen.cancelled) == 1


async def test_subscribed_updates_and_list_changes_reach_the_get_stream_wherever_it_is(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers:
        notes: list[dict[str, Any]] = []

        async def on_notification(method: str, params: Any) -> None:
            notes.append({"method": method, "params": params})

        async with connect_http(
            workers.url, protocol_version=VERSION, on_notification=on_notification
        ) as client:
            await client.subscribe("mem://note")
            for server in workers.servers:  # from each worker in turn
                await server.notify_resource_updated("mem://note")
            await server.notify_resource_updated("mem://other")  # nobody subscribed
            workers.servers[1].add_tool(lambda: "new", name="fresh")
            with anyio.fail_after(5):
                while len(notes) < 4:
                    await anyio.sleep(0.02)
            await anyio.sleep(0.3)  # nothing more comes
        updates = [n for n in notes if n["method"] == "notifications/resources/updated"]
        assert [u["params"]["uri"] for u in updates] == ["mem://note"] * 3
        assert [n["method"] for n in notes if n not in updates] == ["notifications/tools/list_changed"]


async def test_a_log_level_set_on_one_worker_filters_logs_of_a_handler_on_another(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers:
        logs: list[dict[str, Any]] = []
        async with connect_http(workers.url, protocol_version=VERSION, on_log=logs.append) as client:
            await client.set_logging_level("warning")
            for _ in range(3):
                assert (await client.call_tool("chatter"))["content"][0]["text"] == "said"
        assert [entry["data"] for entry in logs] == ["loud"] * 3


async def test_delete_on_one_worker_ends_the_session_on_every_worker(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient() as http:
        session_id = await initialize(http, workers.urls[0])
        answered = await http.post(
            workers.urls[1], content=call(2, "add", {"a": 1, "b": 2}), headers=with_session(session_id)
        )
        assert answered.status_code == 200 and b'"result":3' in answered.content
        deleted = await http.delete(workers.urls[2], headers=with_session(session_id))
        assert deleted.status_code == 204
        for url in workers.urls:
            gone = await http.post(
                url, content=call(3, "add", {"a": 1, "b": 2}), headers=with_session(session_id)
            )
            assert gone.status_code == 404


@requirement("http-resume-own-stream")
async def test_a_stream_dropped_on_one_worker_resumes_on_another_with_nothing_lost_or_repeated(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await initialize(http, workers.urls[0])
        headers = with_session(session_id)
        first: list[tuple[str, dict[str, Any]]] = []
        body = call(7, "slow", {"n": 8, "delay": 0.1}, progress=True)
        async with http.stream("POST", workers.urls[0], content=body, headers=headers) as response:
            decoder = SSEDecoder()
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.data:
                        first.append((event.id or "", json.loads(event.data)))
                if len(first) >= 2:
                    break
        last_id = first[-1][0]
        rest = await resume(http, workers.urls[1], session_id, last_id)
        progress = [
            m["params"]["progress"] for _, m in first + rest if m.get("method") == "notifications/progress"
        ]
        assert progress == [1, 2, 3, 4, 5, 6, 7, 8]
        assert rest[-1][1]["id"] == 7 and rest[-1][1]["result"]["structuredContent"] == {"result": 8}
        ids = [eid for eid, _ in first + rest]
        assert len(ids) == len(set(ids))
        bad = await http.get(
            workers.urls[2], headers={**headers, "last-event-id": "nonsense", "accept": "text/event-stream"}
        )
        assert bad.status_code == 400
        unknown = await http.get(
            workers.urls[2], headers={**headers, "last-event-id": "p1_zz-9999", "accept": "text/event-stream"}
        )
        assert unknown.status_code == 400


async def test_a_second_standalone_stream_elsewhere_takes_over_the_first(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await initialize(http, workers.urls[0])
        headers = {**with_session(session_id), "accept": "text/event-stream"}
        async with http.stream("GET", workers.urls[0], headers=headers) as older:
            assert older.status_code == 200
            async with http.stream("GET", workers.urls[1], headers=headers) as newer:
                assert newer.status_code == 200
                with anyio.fail_after(5):  # the older one ends
                    async for _ in older.aiter_bytes():
                        pass
                await workers.servers[2].notify_resource_updated("mem://note")
                workers.servers[2].add_tool(lambda: 1, name="another")
                decoder = SSEDecoder()
                with anyio.fail_after(5):
                    async for chunk in newer.aiter_bytes():
                        if any("list_changed" in e.data for e in decoder.feed(chunk)):
                            break


async def test_max_sessions_counts_the_sessions_of_every_worker(tmp_path: Path) -> None:
    async with cluster(tmp_path, max_sessions=2) as workers, httpx.AsyncClient() as http:
        await initialize(http, workers.urls[0])
        await initialize(http, workers.urls[1])
        refused = await http.post(workers.urls[2], content=body(INITIALIZE), headers=HEADERS)
        assert refused.status_code == 503 and "retry-after" in refused.headers


async def test_the_stateless_era_needs_only_a_shared_state_key(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers:
        options: dict[str, Any] = {"elicitation": answer_elicitation, "sampling": answer_sampling}
        async with connect_http(workers.url, **options) as client:
            result = await client.call_tool("ask")
            assert client.stateless
        assert result["content"][0]["text"] == "{'n': 'ada'} / hi"


async def test_redis_failing_mid_stream_ends_the_connection_and_the_resumption_gets_an_error(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path, appendonly=True) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await initialize(http, workers.urls[0])
        headers = with_session(session_id)
        last_id, seen = "", 0
        body = call(4, "slow", {"n": 200, "delay": 0.02}, progress=True)
        with anyio.fail_after(10):  # the POST's stream ends instead of hanging
            async with http.stream("POST", workers.urls[0], content=body, headers=headers) as response:
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        last_id = event.id or last_id
                        seen += 1
                        if seen == 3:
                            workers.redis.stop()
        down = await http.post(workers.urls[1], content=call(5, "add", {"a": 1, "b": 1}), headers=headers)
        assert down.status_code == 503 and down.headers["retry-after"] == "1"
        workers.redis.start()
        with anyio.fail_after(10):
            while True:
                try:
                    rest = await resume(http, workers.urls[2], session_id, last_id)
                    break
                except AssertionError:  # 503 until every worker has reconnected
                    await anyio.sleep(0.3)
        final = rest[-1][1]
        assert final["id"] == 4 and final["error"]["code"] == -32603
        assert final["error"]["data"] == {"reason": "store_failed"}


async def test_a_session_is_bound_to_its_principal_on_every_worker(tmp_path: Path) -> None:
    async with cluster(tmp_path, wrap=subject_header) as workers, httpx.AsyncClient() as http:
        alice = {**HEADERS, "x-test-subject": "alice"}
        opened = await http.post(workers.urls[0], content=body(INITIALIZE), headers=alice)
        session = {**with_session(opened.headers["mcp-session-id"]), "x-test-subject": "alice"}
        for url in workers.urls:
            mine = await http.post(url, content=call(2, "principal", {}), headers=session)
            assert mine.status_code == 200 and b"alice" in mine.content
            theirs = await http.post(
                url, content=call(3, "principal", {}), headers={**session, "x-test-subject": "mallory"}
            )
            assert theirs.status_code == 404


async def test_messages_sent_while_no_get_stream_is_open_wait_for_the_next_one_on_any_worker(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await initialize(http, workers.urls[0])
        headers = with_session(session_id)
        answered = await http.post(workers.urls[1], content=call(2, "announce", {"n": 5}), headers=headers)
        assert answered.status_code == 200
        got: list[int] = []
        async with http.stream(
            "GET", workers.urls[2], headers={**headers, "accept": "text/event-stream"}
        ) as stream:
            decoder = SSEDecoder()
            with anyio.fail_after(5):
                async for chunk in stream.aiter_bytes():
                    got += [json.loads(e.data)["params"]["data"] for e in decoder.feed(chunk) if e.data]
                    if len(got) >= 5:
                        break
        assert got == [0, 1, 2, 3, 4]


async def test_a_listen_stream_on_one_worker_hears_changes_published_on_the_others(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, connect_http(workers.url) as client:
        assert client.stateless
        heard: list[tuple[str, Any]] = []
        async with client.listen(resources=True, uris=["mem://note"], tools=True) as subscription:
            for server in workers.servers:
                await server.notify_resource_updated("mem://note")
            workers.servers[0].add_tool(lambda: 2, name="late")
            with anyio.fail_after(5):
                async for method, params in subscription:
                    heard.append((method, params))
                    if len(heard) == 4:
                        break
        updates = [p["uri"] for m, p in heard if m == "notifications/resources/updated"]
        assert updates == ["mem://note"] * 3
        assert [m for m, _ in heard if m != "notifications/resources/updated"] == [
            "notifications/tools/list_changed"
        ]


# ---- raw HTTP helpers ------------------------------------------------------------------------


def with_session(session_id: str) -> dict[str, str]:
    return {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": VERSION}


def call(rid: int, name: str, arguments: dict[str, Any], progress: bool = False) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if progress:
        params["_meta"] = {"progressToken": "t"}
    return httpx.Request(
        "POST", "http://x", json={"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).content


async def initialize(http: httpx.AsyncClient, url: str) -> str:
    response = await http.post(url, content=body(INITIALIZE), headers=HEADERS)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert (await http.post(url, content=note, headers=with_session(session_id))).status_code == 202
    return session_id


async def resume(
    http: httpx.AsyncClient, url: str, session_id: str, last_id: str
) -> list[tuple[str, dict[str, Any]]]:
    headers = {**with_session(session_id), "last-event-id": last_id, "accept": "text/event-stream"}
    got: list[tuple[str, dict[str, Any]]] = []
    async with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                if event.data:
                    got.append((event.id or "", json.loads(event.data)))
    return got


# ---- answers only on the session that was asked ------------------------------------------------


def subject_header(app: Any) -> Any:
    """The principal of each request is its x-test-subject header (a protected server's token, in short)."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            who = dict(scope["headers"]).get(b"x-test-subject", b"").decode()
            token = AccessToken(who, "client", frozenset(), None, (), {"iss": "https://issuer"})
            scope = {**scope, AUTH_SCOPE_KEY: token}
        await app(scope, receive, send)

    return wrapped


async def open_asking_session(http: httpx.AsyncClient, url: str, extra: dict[str, str]) -> dict[str, str]:
    """A session whose client can be asked for elicitation and sampling; its headers."""
    params = {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    opened = await http.post(url, json=body, headers={**HEADERS, **extra})
    assert opened.status_code == 200, opened.text
    headers = {**with_session(opened.headers["mcp-session-id"]), **extra}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=headers)).status_code == 202
    return headers


@pytest.mark.parametrize("protected", [False, True], ids=["anonymous", "two-principals"])
async def test_a_client_cannot_answer_another_sessions_request_through_any_worker(
    tmp_path: Path, protected: bool
) -> None:
    wrap = subject_header if protected else None
    async with cluster(tmp_path, n=2, wrap=wrap) as workers, httpx.AsyncClient(timeout=10) as http:
        victim = await open_asking_session(
            http, workers.urls[0], {"x-test-subject": "alice"} if protected else {}
        )
        attacker = await open_asking_session(
            http, workers.urls[1], {"x-test-subject": "mallory"} if protected else {}
        )
        forged: list[int] = []
        asked_ids: list[str] = []
        final: dict[str, Any] = {}
        with anyio.fail_after(15):
            async with http.stream(
                "POST", workers.urls[0], content=call(2, "ask", {}), headers=victim
            ) as call_stream:
                decoder = SSEDecoder()
                async for chunk in call_stream.aiter_bytes():
                    for event in decoder.feed(chunk):
                        message = json.loads(event.data) if event.data else {}
                        if "method" in message and "id" in message:
                            rid = message["id"]
                            asked_ids.append(rid)
                            # the attacker answers first, with the victim's exact id, through both workers
                            for url in workers.urls:
                                answer = {
                                    "jsonrpc": "2.0",
                                    "id": rid,
                                    "result": forged_result(message["method"]),
                                }
                                forged.append(
                                    (await http.post(url, json=answer, headers=attacker)).status_code
                                )
                            mine = {"jsonrpc": "2.0", "id": rid, "result": honest_result(message["method"])}
                            posted = await http.post(workers.urls[1], json=mine, headers=victim)
                            assert posted.status_code == 202
                        elif message.get("id") == 2:
                            final = message
        assert final["result"]["content"][0]["text"] == "{'n': 'ada'} / hi"
        assert forged == [400] * 4  # two questions, each forged through both workers: refused
        assert len(asked_ids) == 2
        for rid in asked_ids:  # unguessable: a worker's name, then 128 random bits, not a counter
            worker, _, secret = rid.partition(".")
            assert worker and len(secret) >= 21 and not secret.isdigit()
        again = {"jsonrpc": "2.0", "id": asked_ids[0], "result": honest_result("elicitation/create")}
        assert (await http.post(workers.urls[0], json=again, headers=victim)).status_code == 400  # once


def forged_result(method: str) -> dict[str, Any]:
    if method == "elicitation/create":
        return {"action": "accept", "content": {"n": "mallory"}}
    return {"role": "assistant", "content": {"type": "text", "text": "pwned"}, "model": "m"}


def honest_result(method: str) -> dict[str, Any]:
    if method == "elicitation/create":
        return {"action": "accept", "content": {"n": "ada"}}
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}
