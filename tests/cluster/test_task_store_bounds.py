"""The bounds of a task store, the same for both: in this process (InMemoryTaskStore) and in a real
redis-server (RedisTaskStore): a cap on unfinished tasks, a task count and a byte budget that only
finished tasks make room in (oldest first), a size past which a result fails its task, and the indexes
an owner's listing and the counts are read from, which follow expiry."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from redis.asyncio import Redis

from cluster.inprocess import cluster
from cluster.parts import redis_server
from mcpkit.cluster.task_store import RedisTaskStore
from mcpkit.protocol.tasks import Status
from mcpkit.server.tasks.store import InMemoryTaskStore, TaskRecord

pytestmark = pytest.mark.anyio
KIB = 1024


class Kept:
    """A store under test, and how many bytes it says it keeps."""

    def __init__(self, store: Any, redis: Redis | None = None) -> None:
        self.store, self.redis = store, redis

    async def bytes(self) -> int:
        if self.redis is None:
            return int(self.store.bytes)
        return int(await self.redis.get("mcp:{t}:tasks:bytes") or 0)


@pytest.fixture(params=["memory", "redis"])
async def make(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield lambda **bounds: Kept(InMemoryTaskStore(**bounds))
        return
    with redis_server(tmp_path) as server:
        redis = Redis.from_url(server.url)
        try:
            yield lambda **bounds: Kept(RedisTaskStore(redis, **bounds), redis)
        finally:
            await redis.aclose()


def record(task_id: str, owner: str = "alice", ttl_ms: int | None = 3_600_000) -> TaskRecord:
    now = time.time()
    return TaskRecord(task_id, owner, "tool", None, {}, "2026-07-28", now, ttl_ms, 500, updated_at=now)


async def finish(store: Any, task_id: str, result: Any = None) -> TaskRecord:
    def complete(task: TaskRecord) -> bool:
        task.status, task.result = Status.COMPLETED, result if result is not None else {"content": []}
        task.updated_at = time.time()
        return True

    done, changed = await store.update(task_id, complete)
    assert changed and isinstance(done, TaskRecord)
    return done


async def test_a_store_full_of_unfinished_tasks_refuses_another_until_one_ends(make: Any) -> None:
    kept = make(max_live=3, max_tasks=10)
    store = kept.store
    for i, owner in enumerate(["alice", "bob", "carol"]):
        assert await store.create(record(f"t{i}", owner), 100)
    assert not await store.create(record("t3", "dave"), 100)  # a cap across owners, not per owner
    await finish(store, "t0")
    assert await store.create(record("t3", "dave"), 100)


async def test_an_owners_cap_counts_only_that_owners_unfinished_tasks(make: Any) -> None:
    store = make().store
    assert await store.create(record("a1"), 2) and await store.create(record("a2"), 2)
    assert not await store.create(record("a3"), 2)
    assert await store.create(record("b1", "bob"), 2)
    await finish(store, "a1")
    assert await store.create(record("a3"), 2)


async def test_the_task_count_drops_the_oldest_finished_task_and_never_a_running_one(make: Any) -> None:
    store = make(max_tasks=3, max_live=10).store
    for i in range(3):
        assert await store.create(record(f"t{i}"), 100)
    await finish(store, "t0")
    await finish(store, "t1")
    assert await store.create(record("t3"), 100)
    assert await store.get("t0") is None and await store.get("t1") is not None
    assert await store.create(record("t4"), 100)
    assert await store.get("t1") is None
    assert not await store.create(record("t5"), 100)  # t2, t3 and t4 all run: nothing may go
    assert [r.task_id for r in await store.owned("alice")] == ["t2", "t3", "t4"]


async def test_results_stay_within_the_byte_budget_and_a_result_too_large_fails_its_task(make: Any) -> None:
    kept = make(max_bytes=1024 * KIB, max_task_bytes=400 * KIB)
    store = kept.store
    big = {"content": [{"type": "text", "text": "x" * (300 * KIB)}]}
    for i in range(6):
        assert await store.create(record(f"t{i}"), 100)
        await finish(store, f"t{i}", big)
        assert await kept.bytes() <= 1024 * KIB
    kept_ids = [r.task_id for r in await store.owned("alice")]
    assert kept_ids == ["t3", "t4", "t5"]  # the oldest finished went first
    assert (await store.get("t5")).result == big
    assert await store.create(record("huge"), 100)
    failed = await finish(store, "huge", {"content": [{"type": "text", "text": "y" * (500 * KIB)}]})
    assert failed.status is Status.FAILED and failed.result is None
    assert failed.error is not None and failed.error["data"] == {"reason": "too_large"}
    assert (await store.get("huge")).status is Status.FAILED
    assert await kept.bytes() <= 1024 * KIB


async def test_expired_tasks_leave_the_counts_the_byte_total_and_the_owners_list(make: Any) -> None:
    kept = make(max_live=2)
    store = kept.store
    assert await store.create(record("short", ttl_ms=200), 100)
    assert await store.create(record("other", "bob", ttl_ms=200), 100)
    assert not await store.create(record("long"), 100)  # two unfinished: full
    with anyio.fail_after(10):  # a guard, not a timing assertion
        while await store.get("short") is not None:
            await anyio.sleep(0.05)
        while not await store.create(record("long"), 100):  # the expired ones no longer count
            await anyio.sleep(0.05)
    assert [r.task_id for r in await store.owned("alice")] == ["long"]
    assert await store.owned("bob") == []
    only = await store.get("long")
    assert only is not None
    assert await kept.bytes() <= len(orjson.dumps(only)) + 64


# ---- through the protocol, on three workers sharing the Redis ----------------------------------

V = "2026-07-28"
META = "io.modelcontextprotocol/"
CAPS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def post(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], name: str) -> Any:
    headers = {**BASE, "mcp-protocol-version": V, "mcp-method": method, "mcp-name": name}
    meta = {META + "protocolVersion": V, META + "clientCapabilities": CAPS}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    return (await http.post(url, json=body, headers=headers)).json()


async def test_a_cluster_past_its_live_task_cap_answers_busy(tmp_path: Path) -> None:
    async with cluster(tmp_path, max_live_tasks=2) as workers, httpx.AsyncClient(timeout=20) as http:
        calls = [
            await post(http, url, "tools/call", {"name": "confirm", "arguments": {"tag": "x"}}, "confirm")
            for url in workers.urls
        ]
        assert [c["result"]["resultType"] for c in calls[:2]] == ["task", "task"]
        assert calls[2]["error"]["code"] == -32010


async def test_big_task_results_keep_redis_within_the_task_budget(tmp_path: Path) -> None:
    budget = 2 * 1024 * KIB
    async with cluster(tmp_path, task_bytes=budget) as workers, httpx.AsyncClient(timeout=20) as http:
        redis = Redis.from_url(workers.redis_url)
        try:
            for i in range(10):
                url = workers.urls[i % 3]
                created = await post(
                    http, url, "tools/call", {"name": "blob", "arguments": {"kib": 512}}, "blob"
                )
                task_id = created["result"]["taskId"]
                with anyio.fail_after(20):  # a guard, not a timing assertion
                    while (await post(http, url, "tasks/get", {"taskId": task_id}, task_id))["result"][
                        "status"
                    ] != "completed":
                        await anyio.sleep(0.02)
            assert int(await redis.get("mcp:{t}:tasks:bytes") or 0) <= budget
            # what Redis holds for the tasks, allocation included (10 results of 512 KiB were 5 MiB);
            # not INFO's used_memory, which also counts the Lua VM's garbage and the clients' buffers
            held = [await redis.memory_usage(key) or 0 async for key in redis.scan_iter("mcp:{t}:task*")]
            assert sum(held) < 1.5 * budget, held
        finally:
            await redis.aclose()
