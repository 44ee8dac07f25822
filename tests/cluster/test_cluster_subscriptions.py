"""Resource subscriptions across a cluster against a real Redis and three real uvicorn workers: bounded
per session and per URI, and gone from Redis with the sessions that made them."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest

from cluster.inprocess import Workers, cluster
from cluster.test_cluster_sessions import VERSION, initialize, with_session
from cluster.test_cluster_streams import UPDATED, get_stream, updated
from mcpkit import RemoteError
from mcpkit.client import connect_http

pytestmark = pytest.mark.anyio
MIB = 1024 * 1024


def used_memory(workers: Workers) -> int:
    return int(workers.redis.command("INFO", "memory")["used_memory"])


async def test_subscriptions_past_a_sessions_limit_or_to_a_long_uri_are_refused_and_cost_redis_nothing(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, connect_http(workers.url, protocol_version=VERSION) as client:
        before = used_memory(workers)
        refused = []
        for i in range(40):  # 40 MiB asked for: Peers(max_uri_length=2048) by default
            with pytest.raises(RemoteError) as info:
                await client.subscribe(f"mem://any/{i}" + "a" * MIB)
            refused.append(info.value.code)
        grown = used_memory(workers) - before
        for i in range(100):  # Peers(max_subscriptions=100) by default, counted in Redis on every worker
            await client.subscribe(f"mem://any/{i}")
        await client.subscribe("mem://any/0")  # already subscribed: not another one
        with pytest.raises(RemoteError) as full:
            await client.subscribe("mem://note")
    assert refused == [-32602] * 40
    assert grown < MIB, f"Redis grew {grown / MIB:.1f} MiB"
    assert full.value.code == -32602 and "at most 100" in str(full.value)


def listed(workers: Workers, key: str) -> list[bytes]:
    """The members of a subscription index, whichever Redis type holds it."""
    kind = workers.redis.command("TYPE", key)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "set":
        return sorted(workers.redis.command("SMEMBERS", key))
    return list(workers.redis.command("ZRANGE", key, 0, -1)) if kind == "zset" else []


async def test_a_session_that_idled_out_leaves_the_subscription_index_and_a_held_get_keeps_its_own(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path, idle_timeout=1.0) as workers, httpx.AsyncClient(timeout=10) as http:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 9, "method": "resources/subscribe", "params": {"uri": "mem://note"}}
        )
        gone, live = await initialize(http, workers.urls[0]), await initialize(http, workers.urls[1])
        for session_id in (gone, live):
            answered = await http.post(workers.urls[2], content=body, headers=with_session(session_id))
            assert answered.status_code == 200 and b'"result"' in answered.content
        key = "mcp:sub:mem://note"
        async with get_stream(http, workers.urls[0], live) as stream:  # `live` only holds a GET open
            with anyio.fail_after(15):
                while listed(workers, key) != [live.encode()]:
                    await anyio.sleep(0.1)
            await workers.servers[1].notify_resource_updated("mem://note")
            got = await stream.until(updated)
        assert [m["params"]["uri"] for m in got if m.get("method") == UPDATED] == ["mem://note"]
        with anyio.fail_after(15):  # the GET closed: `live` idles out too, and the index goes with it
            while workers.redis.command("KEYS", "mcp:sub:*"):
                await anyio.sleep(0.1)
