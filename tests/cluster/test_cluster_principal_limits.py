"""Limits per principal held across a cluster: two uvicorn workers behind a round-robin haproxy, counting in
one Redis (RateLimit and ConcurrencyLimit with `store=RedisBackplane.limits()`), the principals being API
keys (tests/cluster/limits_app.py). A principal flooding both workers gets its rate in total, not per
worker; another principal is unaffected. Redis out of reach refuses a limited call, never waves it through."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from redis.asyncio import Redis

from cluster.limits_app import KEYS
from cluster.parts import Cluster, cluster, redis_server
from mcpkit import Server
from mcpkit.client import Client, connect_http
from mcpkit.cluster import RedisLimits
from mcpkit.protocol.errors import RemoteError
from mcpkit.server.middleware import ConcurrencyLimit, RateLimit
from mcpkit.testing import connect
from messages import HEADERS

pytestmark = pytest.mark.anyio

ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]
ERA_IDS = ["2025-11-25", "2026-07-28"]
BURST = 10
RATE = 0.01  # a token every 100 s: within a test's minutes, the burst is all a principal gets
CAP = 3


@contextmanager
def limited_cluster(tmp_path: Path, rate: float = RATE, burst: int = BURST) -> Iterator[Cluster]:
    env = {
        "MCPKIT_TEST_DIR": str(tmp_path),
        "MCPKIT_RATE": str(rate),
        "MCPKIT_BURST": str(burst),
        "MCPKIT_MAX_IN_FLIGHT": str(CAP),
    }
    with (
        redis_server(tmp_path) as redis,
        cluster(2, app="limits_app:build", env={**env, "MCPKIT_REDIS_URL": redis.url}, tmp_dir=tmp_path) as c,
    ):
        yield c


@asynccontextmanager
async def as_principal(url: str, who: str, era: dict[str, str]) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {KEYS[who]}"}
    async with connect_http(url, headers=headers, **era) as client:  # type: ignore[arg-type]
        yield client


def holding(tmp_path: Path) -> int:
    """How many `hold` calls got past the limits so far."""
    return len(list(tmp_path.glob("held-*")))


async def flood(client: Client, n: int, tool: str = "add") -> tuple[int, list[dict[str, Any]]]:
    """`n` concurrent calls of `tool`: how many were answered, and the data of each -32010 refusal."""
    arguments = {"a": 1, "b": 2} if tool == "add" else {}
    answered = 0
    refused: list[dict[str, Any]] = []

    async def one() -> None:
        nonlocal answered
        try:
            await client.call_tool(tool, arguments)
            answered += 1
        except RemoteError as exc:
            assert exc.code == -32010, exc
            refused.append(exc.data)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            for _ in range(n):
                tg.start_soon(one)
    return answered, refused


@pytest.mark.parametrize("era", ERAS, ids=ERA_IDS)
async def test_one_principal_flooding_two_workers_is_held_to_its_rate_in_total_and_another_is_unaffected(
    tmp_path: Path, era: dict[str, str]
) -> None:
    with limited_cluster(tmp_path) as workers:
        began = time.monotonic()
        async with as_principal(workers.url, "alice", era) as alice:
            answered, refused = await flood(alice, 4 * BURST)
        elapsed = time.monotonic() - began
        async with as_principal(workers.url, "bob", era) as bob:
            bob_answered, bob_refused = await flood(bob, BURST)
        served = workers.proxy.servers()
    # one bucket for both workers: the burst, plus what refilled meanwhile (nothing in under 100 s)
    assert BURST <= answered <= BURST + int(elapsed * RATE), (answered, elapsed)
    assert len(refused) == 4 * BURST - answered
    assert all(data["retryAfterMs"] > 0 for data in refused)
    assert (bob_answered, bob_refused) == (BURST, [])
    assert all(int(row["stot"]) > BURST for row in served.values()), served  # both workers took the flood


async def test_a_sustained_flood_gets_the_burst_plus_the_rate_over_the_time_taken_not_twice_that(
    tmp_path: Path,
) -> None:
    rate, burst = 5.0, 5
    with limited_cluster(tmp_path, rate=rate, burst=burst) as workers:
        async with as_principal(workers.url, "alice", {"era": "modern"}) as alice:
            answered = 0
            began = time.monotonic()
            while time.monotonic() - began < 3:
                answered += (await flood(alice, 10))[0]
            elapsed = time.monotonic() - began
    # two buckets (one a worker) would allow up to twice this
    assert burst <= answered <= burst + rate * elapsed + 1, (answered, elapsed)


async def test_past_its_rate_a_2026_request_is_429_with_retry_after(tmp_path: Path) -> None:
    with limited_cluster(tmp_path) as workers:
        async with as_principal(workers.url, "alice", {"era": "modern"}) as alice:
            await flood(alice, BURST)
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta},
        }
        headers = {
            **HEADERS,
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "add",
            "authorization": f"Bearer {KEYS['alice']}",
        }
        async with httpx.AsyncClient(timeout=30) as http:
            refused = await http.post(workers.url, content=json.dumps(body), headers=headers)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == -32010
    assert refused.headers["retry-after"] == str(-(-error["data"]["retryAfterMs"] // 1000))
    assert int(refused.headers["retry-after"]) > 1  # a token every 100 s: not the default second


async def test_calls_in_flight_are_capped_per_principal_across_workers(tmp_path: Path) -> None:
    era = {"protocol_version": "2025-11-25"}
    with limited_cluster(tmp_path) as workers:
        async with (
            as_principal(workers.url, "alice", era) as alice,
            as_principal(workers.url, "bob", era) as bob,
        ):
            results: dict[str, list[str]] = {"alice": [], "bob": []}

            async def held(who: str, client: Client) -> None:
                try:
                    results[who].append(str((await client.call_tool("hold", {}))["content"][0]["text"]))
                except RemoteError as exc:
                    assert exc.code == -32010 and exc.data["maxInFlight"] == CAP, exc
                    results[who].append("busy")

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    for _ in range(3 * CAP):
                        tg.start_soon(held, "alice", alice)
                    while results["alice"].count("busy") + holding(tmp_path) < 3 * CAP:
                        await anyio.sleep(0.05)  # each of alice's calls is refused or held
                    assert (results["alice"].count("busy"), holding(tmp_path)) == (2 * CAP, CAP)
                    tg.start_soon(held, "bob", bob)  # not alice's count: held too, not refused
                    while holding(tmp_path) < CAP + 1 and not results["bob"]:
                        await anyio.sleep(0.05)
                    (tmp_path / "release").touch()
            again, _ = await flood(alice, CAP, "hold")  # every slot was given back
    assert {name for name in results["alice"] if name != "busy"} <= {"w1", "w2"}
    assert len(results["bob"]) == 1 and results["bob"][0] != "busy"
    assert holding(tmp_path) == CAP + 1 + CAP  # the refused ones never ran
    assert again == CAP


async def test_with_redis_out_of_reach_a_limited_call_is_refused_as_store_unavailable(tmp_path: Path) -> None:
    server = Server("limited")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with redis_server(tmp_path) as redis:
        store = RedisLimits(Redis.from_url(redis.url, socket_timeout=2, socket_connect_timeout=1))
        server.middleware.add(RateLimit(per_second=1, burst=5, store=store), methods={"tools/call"})
        server.middleware.add(ConcurrencyLimit(2, store=store), methods={"tools/call"})
        async with connect(server) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
            redis.stop()
            with pytest.raises(RemoteError) as refused:
                await client.call_tool("add", {"a": 1, "b": 2})
    assert refused.value.code == -32011 and refused.value.data == {"retryAfterMs": 1000}
