"""Limits a cluster worker applies across the cluster: a session's requests in flight (`max_in_flight`,
counted in Redis, so it holds whichever workers the requests land on) and the worker's Redis connections
(`max_connections`: running out is busy, -32010 / 429, never the 503 of an outage)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from redis.asyncio import Redis

from cluster.inprocess import cluster
from cluster.parts import redis_server
from cluster.raw_http import open_session
from mcpkit.cluster.reclaim import Reclaimer, reclaim
from mcpkit.cluster.state import SharedState
from mcpkit.runtime.stream import Restored

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


def call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def outcome(response: httpx.Response) -> str:
    """'ok', 'busy' (-32010 naming the cap) or what else came back."""
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = text.split("data: ", 1)[-1]
    if '"held"' in text:
        return "ok"
    if '"code":-32010' in text and '"maxInFlight":20' in text:
        return "busy"
    return text


async def test_concurrent_calls_in_one_session_are_capped_across_workers_and_never_an_outage(
    tmp_path: Path,
) -> None:
    # 60 calls at a cap of 20 (the default cap is 100; 250 calls at it behave the same, and cost more)
    async with cluster(tmp_path, n=2, max_in_flight=20) as workers:
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(timeout=60, limits=limits) as http:
            headers = await open_session(http, workers.urls[0], VERSION)
            outcomes: list[str] = []

            async def one(i: int) -> None:
                url = workers.urls[i % 2]  # both workers: the cap is the session's, not a worker's
                outcomes.append(
                    outcome(await http.post(url, json=call(10 + i, "hold", {"seconds": 3}), headers=headers))
                )

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    for i in range(60):
                        tg.start_soon(one, i)
            assert set(outcomes) == {"ok", "busy"}, set(outcomes)
            assert workers.seen.most_held <= 20
            assert outcomes.count("ok") >= 20
            # every request left the count: a full cap's worth runs again at once
            outcomes.clear()
            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    for i in range(100, 120):
                        tg.start_soon(one, i)
            assert outcomes == ["ok"] * 20


async def test_a_worker_out_of_redis_connections_answers_busy_with_429_not_an_outage(tmp_path: Path) -> None:
    async with cluster(tmp_path, n=1, max_connections=4, pool_timeout=0.3) as workers:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, workers.urls[0], VERSION)
            responses: list[httpx.Response] = []

            async def one(i: int) -> None:
                responses.append(
                    await http.post(
                        workers.urls[0], json=call(10 + i, "hold", {"seconds": 0}), headers=headers
                    )
                )

            # Redis holds every write for a second: the worker's connections stay in use meanwhile
            workers.redis.command("CLIENT", "PAUSE", "1000", "WRITE")
            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for i in range(12):
                        tg.start_soon(one, i)
        statuses = sorted({r.status_code for r in responses})
        assert statuses == [200, 429], statuses
        for refused in (r for r in responses if r.status_code == 429):
            assert refused.headers["retry-after"] == "1"
            error = refused.json()["error"]
            assert error["code"] == -32010 and error["message"].startswith("Server busy")


async def test_requests_in_flight_on_a_dead_worker_give_their_places_back_to_the_session(
    tmp_path: Path,
) -> None:
    """A request answered as JSON whose worker died has no stream a resumption would settle: when the
    session is busy, the worker admitting a request ends those of dead workers (no heartbeat) first."""
    async with cluster(tmp_path, n=1, max_in_flight=2) as workers, httpx.AsyncClient(timeout=30) as http:
        headers = await open_session(http, workers.urls[0], VERSION)
        session_id = headers["mcp-session-id"]
        redis = Redis.from_url(workers.redis_url)
        try:
            limits: dict[str, Any] = {"idle_timeout": 1800, "max_sessions": 10_000, "max_events": 1000}
            elsewhere = SharedState(redis, prefix="mcp:", **limits)  # a worker "gone" took two, then died
            for rid in (901, 902):
                await elsewhere.begin(session_id, None, worker="gone", request_id=rid, stream_id=f"q{rid}")
            call_now = call(10, "hold", {"seconds": 0})
            answered = await http.post(workers.urls[0], json=call_now, headers=headers)
            assert outcome(answered) == "ok"
            lost = await elsewhere.read(session_id, 0)
        finally:
            await redis.aclose()
    assert lost is not None
    ended = [orjson.loads(event.data) for event in lost[1] if event.final]
    gone = [message["id"] for message in ended if "error" in message]
    assert sorted(gone) == [901, 902]  # each with the lost answer a resumption of its stream reads
    assert {m["error"]["data"]["reason"] for m in ended if "error" in m} == {"worker_lost"}


async def test_a_busy_session_is_searched_for_dead_workers_once_per_dead_after_not_on_every_refusal(
    tmp_path: Path,
) -> None:
    with redis_server(tmp_path) as store:
        redis = Redis.from_url(store.url)
        try:
            limits: dict[str, Any] = {"idle_timeout": 1800, "max_sessions": 10, "max_events": 100}
            state = SharedState(redis, prefix="mcp:", **limits)
            assert await state.create("s1", None)
            await state.agreed("s1", Restored("2025-11-25", {}, {}))
            look = Reclaimer(state, every=60.0)
            await state.begin("s1", None, worker="gone", request_id=1, stream_id="q1")
            assert await look("s1") == 1
            await state.begin("s1", None, worker="gone", request_id=2, stream_id="q2")
            assert await look("s1") == 0  # within `every`: refused without a scan
            assert await reclaim(state, "s1") == 1  # the scan itself still finds it
        finally:
            await redis.aclose()
