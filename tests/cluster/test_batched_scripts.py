"""A worker's script calls of one event-loop turn go to Redis as one pipeline (cluster/batch.py), and
each caller still gets its own reply or error, against a real redis-server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from cluster.parts import redis_server
from mcpkit.cluster.pool import WaitingPool
from mcpkit.cluster.state import SharedState
from mcpkit.runtime.stream import Restored

pytestmark = pytest.mark.anyio
AGREED = Restored("2025-06-18", {}, {"name": "c", "version": "1"})


@pytest.fixture
async def counted(tmp_path: Path) -> AsyncIterator[tuple[SharedState, WaitingPool, Redis]]:
    with redis_server(tmp_path) as process:
        pool = WaitingPool.from_url(process.url, max_connections=8, timeout=2)
        client = Redis(connection_pool=pool)
        yield SharedState(client, prefix="b:", idle_timeout=30, max_sessions=100, max_events=10), pool, client
        await client.aclose()


async def opened(state: SharedState, count: int) -> list[str]:
    sessions = [f"s{i}" for i in range(count)]
    for sid in sessions:
        assert await state.create(sid, None)
        await state.agreed(sid, AGREED)
    return sessions


async def test_the_scripts_called_in_one_turn_reach_redis_in_one_round_trip(
    counted: tuple[SharedState, WaitingPool, Redis],
) -> None:
    state, pool, _ = counted
    sessions = await opened(state, 20)
    found: dict[str, Restored | None] = {}

    async def begin(sid: str) -> None:
        found[sid] = await state.begin(sid, None)

    await state.begin(sessions[0], None)  # Redis has the script from now on
    before = pool.traffic.round_trips
    async with anyio.create_task_group() as tg:
        for sid in sessions:
            tg.start_soon(begin, sid)
    assert pool.traffic.round_trips - before == 1
    assert found == dict.fromkeys(sessions, AGREED)


async def test_a_script_failing_in_a_batch_fails_only_its_own_caller(
    counted: tuple[SharedState, WaitingPool, Redis],
) -> None:
    state, _, client = counted
    sessions = await opened(state, 3)
    await client.delete(state.key("s1", "s"))
    await client.set(state.key("s1", "s"), b"not a hash")  # its script's HMGET answers WRONGTYPE
    outcomes: dict[str, object] = {}

    async def begin(sid: str) -> None:
        try:
            outcomes[sid] = await state.begin(sid, None)
        except ResponseError as exc:
            outcomes[sid] = exc

    async with anyio.create_task_group() as tg:
        for sid in sessions:
            tg.start_soon(begin, sid)
    assert outcomes["s0"] == AGREED and outcomes["s2"] == AGREED
    assert isinstance(outcomes["s1"], ResponseError) and "WRONGTYPE" in str(outcomes["s1"])


async def test_scripts_a_restarted_redis_lost_are_loaded_again(
    counted: tuple[SharedState, WaitingPool, Redis],
) -> None:
    state, _, client = counted
    sessions = await opened(state, 5)
    await client.script_flush()  # as after a restart or a failover to a replica that never ran them
    found: dict[str, Restored | None] = {}

    async def begin(sid: str) -> None:
        found[sid] = await state.begin(sid, None)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for sid in sessions:
                tg.start_soon(begin, sid)
    assert found == dict.fromkeys(sessions, AGREED)


async def test_every_caller_of_a_turn_hears_that_redis_is_unreachable(tmp_path: Path) -> None:
    with redis_server(tmp_path) as process:
        url = process.url
    client = Redis(connection_pool=WaitingPool.from_url(url, max_connections=2, timeout=2))
    state = SharedState(client, prefix="b:", idle_timeout=30, max_sessions=10, max_events=10)
    failures: list[BaseException] = []

    async def begin(sid: str) -> None:
        try:
            await state.begin(sid, None)
        except RedisConnectionError as exc:
            failures.append(exc)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(begin, f"s{i}")
    assert len(failures) == 4
    await client.aclose()
