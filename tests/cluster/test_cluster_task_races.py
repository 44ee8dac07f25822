"""Task state changes in Redis are atomic (a compare-and-set on the record, server/tasks/store.py): two
workers given the same tasks/update resume the task once, and a cancel racing the task's completion
either wins and stays, or loses and says so. Against a real redis-server; the workers run in this
process (cluster/inprocess.py) so a test sees what their tools did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from redis.asyncio import Redis

from cluster.inprocess import cluster
from cluster.parts import redis_server
from mcpkit.cluster import task_scripts
from mcpkit.cluster.task_store import RedisTaskStore
from mcpkit.protocol.tasks import Status
from mcpkit.server.tasks.store import TaskRecord

pytestmark = pytest.mark.anyio
V = "2026-07-28"
META = "io.modelcontextprotocol/"
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def post(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], name: str) -> Any:
    """One 2026-07-28 request declaring the tasks extension; its JSON-RPC response."""
    headers = {**BASE, "mcp-protocol-version": V, "mcp-method": method, "mcp-name": name}
    meta = {META + "protocolVersion": V, META + "clientCapabilities": TASKS}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    reply = await http.post(url, content=json.dumps(body).encode(), headers=headers)
    return reply.json()


async def until(read: Any, done: Any, timeout: float = 20.0) -> Any:
    """`await read()` until `done(value)`; fails after `timeout` (a guard, not a timing assertion)."""
    with anyio.fail_after(timeout):
        while True:
            value = await read()
            if done(value):
                return value
            await anyio.sleep(0.02)


async def test_the_same_tasks_update_sent_to_two_workers_resumes_the_task_once(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=20) as http:
        tags = [f"t{i}" for i in range(8)]
        for tag in tags:
            await update_twice(http, workers.urls[0], workers.urls[1], tag)
        assert sorted(workers.seen.resumed) == sorted(tags)  # each remainder ran exactly once


async def update_twice(http: httpx.AsyncClient, a: str, b: str, tag: str) -> None:
    """A `confirm` task answered by the same tasks/update on workers `a` and `b` at once."""
    created = await post(http, a, "tools/call", {"name": "confirm", "arguments": {"tag": tag}}, "confirm")
    task_id = created["result"]["taskId"]

    async def get() -> Any:
        return (await post(http, b, "tasks/get", {"taskId": task_id}, task_id))["result"]

    parked = await until(get, lambda t: t["status"] == "input_required")
    answers = {key: {"action": "accept", "content": {"ok": True}} for key in parked["inputRequests"]}
    acks: list[Any] = []

    async def send(url: str) -> None:
        acks.append(
            await post(http, url, "tasks/update", {"taskId": task_id, "inputResponses": answers}, task_id)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(send, a)
        tg.start_soon(send, b)
    assert all("result" in ack for ack in acks), acks
    done = await until(get, lambda t: t["status"] == "completed")
    assert done["result"]["content"][0]["text"] == f"{tag}: accept"
    await get()  # one more round trip: a second run, had one started, has noted itself by now


def record(task_id: str) -> TaskRecord:
    return TaskRecord(task_id, "alice", "tool", None, {}, V, 1.0e9, None, 500)


async def test_a_cancel_racing_a_completion_either_wins_and_stays_or_reports_it_lost(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        one, two = Redis.from_url(server.url), Redis.from_url(server.url)
        try:
            first, second = RedisTaskStore(one), RedisTaskStore(two)
            retried = [await cancel_and_complete(first, second, f"race{i}") for i in range(30)]
            assert any(retried)  # the two did collide: the loser read the task again
        finally:
            await one.aclose()
            await two.aclose()


async def cancel_and_complete(first: RedisTaskStore, second: RedisTaskStore, task_id: str) -> bool:
    """One task cancelled through `first` and completed through `second` at once; whether a change had
    to be computed again."""
    assert await first.create(record(task_id), 100)
    calls: list[str] = []
    outcome: dict[str, bool] = {}

    def cancel(fresh: TaskRecord) -> bool:
        calls.append("cancel")
        if fresh.status.terminal:
            return False
        fresh.status, fresh.cancel_requested = Status.CANCELLED, True
        return True

    def complete(fresh: TaskRecord) -> bool:
        calls.append("complete")
        if fresh.status.terminal:
            return False
        fresh.status, fresh.result = Status.COMPLETED, {"content": []}
        return True

    async def run(store: RedisTaskStore, name: str, change: Any) -> None:
        outcome[name] = (await store.update(task_id, change))[1]

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, first, "cancel", cancel)
        tg.start_soon(run, second, "complete", complete)
    final = await first.get(task_id)
    assert final is not None
    assert outcome["cancel"] != outcome["complete"]  # exactly one change was made
    assert final.status is (Status.CANCELLED if outcome["cancel"] else Status.COMPLETED)
    assert final.cancel_requested is outcome["cancel"]
    return len(calls) > 2


async def blocked(redis: Redis, count: int) -> None:
    """Until `count` clients wait on Redis's CLIENT PAUSE (a guard against hanging, not a timing bound)."""
    with anyio.fail_after(20):
        while (await redis.info("clients"))["blocked_clients"] < count:
            await anyio.sleep(0.01)


async def test_a_cancel_written_before_the_tasks_completion_is_not_overwritten_by_it(tmp_path: Path) -> None:
    """The cancel and the leg's completion both read the task working; Redis (CLIENT PAUSE WRITE) holds
    both writes and then runs them in order, the cancel's first: the task stays cancelled."""
    options: dict[str, Any] = {"heartbeat": 60.0, "dead_after": 120.0}  # no heartbeat write meanwhile
    async with cluster(tmp_path, **options) as workers, httpx.AsyncClient(timeout=30) as http:
        a, b = workers.urls[0], workers.urls[1]
        created = await post(http, a, "tools/call", {"name": "gated", "arguments": {}}, "gated")
        task_id = created["result"]["taskId"]
        redis = Redis.from_url(workers.redis_url)
        try:
            await redis.script_load(task_scripts.UPDATE)  # else a held EVALSHA is retried out of order
            base = (await redis.info("clients"))["blocked_clients"]
            await redis.client_pause(20_000, all=False)  # writes only
            acks: list[Any] = []

            async def cancel() -> None:
                acks.append(await post(http, b, "tasks/cancel", {"taskId": task_id}, task_id))

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel)
                await blocked(redis, base + 1)  # the cancel read the task working; its write waits
                workers.seen.gate.set()
                await blocked(redis, base + 2)  # so did the finished leg's
                await redis.client_unpause()
        finally:
            await redis.client_unpause()
            await redis.aclose()
        assert acks[0]["result"]["resultType"] == "complete"
        after = await post(http, a, "tasks/get", {"taskId": task_id}, task_id)
        assert after["result"]["status"] == "cancelled"
