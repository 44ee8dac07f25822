"""The two LimitStores keep one contract: this process's memory (MemoryLimits) and Redis shared by a
cluster's workers (RedisLimits, against a real redis-server). A bucket gives its burst, then says how long
until the next token, and that token is there once that time has passed; slots are capped and come back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis

from cluster.parts import redis_server
from mcpkit.cluster import RedisLimits
from mcpkit.server.middleware.limit_store import LimitStore, MemoryLimits

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[LimitStore]:
    if request.param == "memory":
        yield MemoryLimits()
        return
    with redis_server(tmp_path) as server:
        client = Redis.from_url(server.url)
        try:
            yield RedisLimits(client, lease=1.0)
        finally:
            await client.aclose()


async def test_a_bucket_gives_its_burst_then_a_token_once_the_wait_it_named_has_passed(
    store: LimitStore,
) -> None:
    assert [await store.take("alice", 4.0, 2) for _ in range(2)] == [0.0, 0.0]
    wait = await store.take("alice", 4.0, 2)
    assert 0 < wait <= 0.251
    assert await store.take("bob", 4.0, 2) == 0.0  # another key, another bucket
    await anyio.sleep(wait)
    assert await store.take("alice", 4.0, 2) == 0.0


async def test_slots_are_capped_per_key_and_a_slot_given_back_is_taken_again(store: LimitStore) -> None:
    first, second = await store.enter("alice", 2), await store.enter("alice", 2)
    assert first is not None and second is not None and first != second
    assert await store.enter("alice", 2) is None
    assert await store.enter("bob", 2) is not None
    await store.leave("alice", first)
    assert await store.enter("alice", 2) is not None


async def test_a_redis_slot_nobody_gave_back_counts_only_until_its_lease_ends(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        client = Redis.from_url(server.url)
        try:
            store = RedisLimits(client, lease=0.3)
            assert await store.enter("alice", 1) is not None  # its worker dies: no leave
            assert await store.enter("alice", 1) is None
            await anyio.sleep(0.4)
            assert await store.enter("alice", 1) is not None
        finally:
            await client.aclose()
