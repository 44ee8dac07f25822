"""Tasks (2026-07-28 extension) kept in Redis by three uvicorn workers behind round-robin haproxy: any
worker answers for any task, a task whose worker is killed is failed (never left working), a finished
task outlives a restart of every worker, expiry removes it, and a cancel reaches the leg's worker."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.parts import Cluster, cluster, redis_server
from conftest import requirement
from mcpkit.client import connect_http
from mcpkit.protocol.sse import SSEDecoder
from messages import initialize

pytestmark = pytest.mark.anyio
V = "2026-07-28"
V2025 = "2025-11-25"
META = "io.modelcontextprotocol/"
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@contextmanager
def task_cluster(tmp_path: Path, **env: str) -> Iterator[Cluster]:
    with redis_server(tmp_path) as redis:
        extra = {"MCPKIT_REDIS_URL": redis.url, "MCPKIT_TEST_DIR": str(tmp_path), **env}
        with cluster(3, env=extra, tmp_dir=tmp_path) as group:
            yield group


def post(http: httpx.Client, url: str, method: str, params: dict[str, Any], name: str | None = None) -> Any:
    """One 2026-07-28 request declaring the tasks extension; its JSON-RPC response."""
    headers = {**BASE, "mcp-protocol-version": V, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    meta = {META + "protocolVersion": V, META + "clientCapabilities": TASKS}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    reply = http.post(url, content=json.dumps(body).encode(), headers=headers)
    return reply.json()


def start(http: httpx.Client, url: str, seconds: float) -> str:
    created = post(
        http, url, "tools/call", {"name": "long_task", "arguments": {"seconds": seconds}}, "long_task"
    )
    assert created["result"]["resultType"] == "task", created
    return str(created["result"]["taskId"])


def get(http: httpx.Client, url: str, task_id: str) -> Any:
    return post(http, url, "tasks/get", {"taskId": task_id}, task_id)


@requirement("tasks-ext-worker-lost")
def test_a_task_whose_worker_is_killed_is_failed_by_whichever_worker_is_asked(tmp_path: Path) -> None:
    with task_cluster(tmp_path) as group, httpx.Client(timeout=10) as http:
        task_id = start(http, group.workers.urls[0], 60)
        assert get(http, group.workers.urls[1], task_id)["result"]["status"] == "working"
        group.workers.kill(0)
        status = _wait_for(
            lambda: get(http, group.url, task_id)["result"], lambda t: t["status"] != "working"
        )
        assert status["status"] == "failed" and "stopped" in status["statusMessage"]
        assert status["error"]["code"] == -32603 and status["error"]["data"] == {"reason": "worker_lost"}


def test_a_finished_task_outlives_a_restart_of_every_worker_and_then_expires(tmp_path: Path) -> None:
    # the TTL outlasts a restart of every worker on a loaded machine (4 s did not), and expiry is awaited
    with task_cluster(tmp_path, MCPKIT_TASK_TTL_MS="15000") as group, httpx.Client(timeout=10) as http:
        task_id = start(http, group.url, 0.1)
        done = _wait_for(
            lambda: get(http, group.url, task_id)["result"], lambda t: t["status"] == "completed"
        )
        assert done["result"]["content"][0]["text"].startswith("worked 0.1 s on w")
        group.workers.restart()
        again = _wait_for(lambda: _answer_or_none(http, group.url, task_id), lambda r: r is not None)[
            "result"
        ]
        assert again["status"] == "completed" and again["result"] == done["result"]
        gone = _wait_for(lambda: get(http, group.url, task_id), lambda r: "error" in r, timeout=30)
        assert gone["error"]["code"] == -32602


def test_a_cancel_through_another_worker_stops_the_leg_where_it_runs(tmp_path: Path) -> None:
    with task_cluster(tmp_path) as group, httpx.Client(timeout=10) as http:
        task_id = start(http, group.workers.urls[0], 60)
        ack = post(http, group.workers.urls[2], "tasks/cancel", {"taskId": task_id}, task_id)
        assert ack["result"]["resultType"] == "complete" and "taskId" not in ack["result"]
        _wait_for(
            lambda: sorted(p.name for p in tmp_path.glob("task-cancelled-*")), lambda names: bool(names)
        )
        assert [p.name for p in tmp_path.glob("task-cancelled-*")] == ["task-cancelled-w1"]
        assert get(http, group.workers.urls[1], task_id)["result"]["status"] == "cancelled"


async def test_mcpkit_client_follows_a_task_whose_polls_land_on_every_worker(tmp_path: Path) -> None:
    with task_cluster(tmp_path) as group:
        async with connect_http(group.url) as client:
            handle = await client.call_tool_as_task("long_task", {"seconds": 0.5})
            assert handle.task_id is not None
            result = await handle.result()
        assert result["content"][0]["text"].startswith("worked 0.5 s on w")


def _answer_or_none(http: httpx.Client, url: str, task_id: str) -> Any:
    """tasks/get through haproxy, or None while it has no worker up yet (its health checks run every
    200 ms: right after a restart it answers 503 itself)."""
    try:
        return get(http, url, task_id)
    except (ValueError, httpx.HTTPError):
        return None


def test_a_task_that_ends_while_redis_is_away_has_its_end_written_once_redis_is_back(tmp_path: Path) -> None:
    with redis_server(tmp_path, appendonly=True) as redis, httpx.Client(timeout=10) as http:
        extra = {"MCPKIT_REDIS_URL": redis.url, "MCPKIT_TEST_DIR": str(tmp_path)}
        with cluster(1, env=extra, tmp_dir=tmp_path) as group:
            task_id = start(http, group.workers.urls[0], 1.0)
            redis.stop()
            time.sleep(2.0)  # the task ended meanwhile: its end could not be written
            redis.start()  # appendonly: the task is still "working" there
            ended = _wait_for(
                lambda: get(http, group.workers.urls[0], task_id).get("result", {}),
                lambda t: t.get("status") not in (None, "working"),
                timeout=20,
            )
    assert ended["status"] == "completed", ended


def _wait_for(read: Any, done: Any, timeout: float = 10.0) -> Any:
    """`read()` until `done(value)` or `timeout`; the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


@requirement("tasks-utility-worker-lost")
async def test_a_blocking_tasks_result_notices_that_the_tasks_worker_died(tmp_path: Path) -> None:
    """2025-11-25: tasks/result blocks until the task ends; a task whose worker was killed ends (failed),
    and the blocked request learns it by itself, with nobody polling tasks/get (its ttl is an hour)."""
    with task_cluster(tmp_path) as group:
        first, second = group.workers.urls[0], group.workers.urls[1]
        async with httpx.AsyncClient(timeout=60) as http:
            session = await open_session(http, second)
            call = {"name": "long_task", "arguments": {"seconds": 600}, "task": {}}
            created = await session_request(http, first, session, 1, "tools/call", call)
            task_id = created["result"]["task"]["taskId"]
            outcome: list[Any] = []

            async def wait_for_result() -> None:
                outcome.append(
                    await session_request(http, second, session, 2, "tasks/result", {"taskId": task_id})
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(wait_for_result)
                group.workers.kill(0)
                with anyio.fail_after(30):  # dead_after is 1 s: a guard, not a timing assertion
                    while not outcome:
                        await anyio.sleep(0.05)
        error = outcome[0]["error"]
        assert error["code"] == -32603 and error["data"] == {"reason": "worker_lost"}


async def open_session(http: httpx.AsyncClient, url: str) -> str:
    body = initialize(V2025, rid=0)
    response = await http.post(url, json=body, headers=BASE)
    session_id = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=note, headers=in_session(session_id))
    return session_id


def in_session(session_id: str) -> dict[str, str]:
    return {**BASE, "mcp-session-id": session_id, "mcp-protocol-version": V2025}


async def session_request(
    http: httpx.AsyncClient, url: str, session_id: str, rid: int, method: str, params: dict[str, Any]
) -> Any:
    """A 2025-11-25 request of the session; its JSON-RPC response (from JSON or from its SSE stream)."""
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    response = await http.post(url, json=body, headers=in_session(session_id))
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    messages = [json.loads(e.data) for e in SSEDecoder().feed(response.content) if e.data]
    return next(m for m in messages if m.get("id") == rid)
