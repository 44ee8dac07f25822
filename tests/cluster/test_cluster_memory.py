"""Sessions opened across three workers and abandoned leave nothing behind: their keys expire in Redis,
Redis's memory returns to where it was, and no worker keeps anything per session (10,000 of them at
MCPKIT_SCALE=1, tests/scale.py)."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import anyio
import httpx
import pytest
import redis

from cluster.inprocess import cluster
from messages import HEADERS, INITIALIZE, INITIALIZED, VERSION, body
from scale import scaled

SESSIONS = scaled(10_000, least=500)
pytestmark = pytest.mark.anyio


def rss_kib() -> int:
    return int(Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0])


async def post(http: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """One POST, sent again once if a reused keep-alive connection was closed under it (the load
    generator's problem, not the server's: it answered every request it read)."""
    try:
        return await http.post(url, content=body, headers=headers)
    except httpx.TransportError:
        return await http.post(url, content=body, headers=headers)


async def open_sessions(http: httpx.AsyncClient, urls: list[str], count: int) -> None:
    async def worker(start: int) -> None:
        for i in range(start, count, 32):
            opened = await post(http, urls[i % len(urls)], body(INITIALIZE), HEADERS)
            assert opened.status_code == 200
            headers = {
                **HEADERS,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": VERSION,
            }
            initialized = await post(http, urls[(i + 1) % len(urls)], body(INITIALIZED), headers)
            assert initialized.status_code in (202, 404)  # 404: idle past the 2 s timeout under load

    async with anyio.create_task_group() as tg:
        for start in range(32):
            tg.start_soon(worker, start)


@pytest.mark.scale
async def test_abandoned_sessions_by_the_thousand_leave_redis_and_the_workers_as_they_were(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path, idle_timeout=2.0, max_sessions=20_000) as workers:
        store = redis.Redis.from_url(workers.redis_url)
        # idle connections are dropped before uvicorn's 5 s keep-alive timeout closes them under us
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64, keepalive_expiry=2)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            await open_sessions(http, workers.urls, 300)  # warm up: code paths, pools, allocator
            await anyio.sleep(2.5)
            await open_sessions(http, workers.urls, 1)  # a create trims the sessions index
            base_keys, base_memory, base_rss = store.dbsize(), store.info("memory")["used_memory"], rss_kib()
            expired_before = store.info("stats")["expired_keys"]
            await open_sessions(http, workers.urls, SESSIONS)
            peak_memory = store.info("memory")["used_memory_peak"]
            await anyio.sleep(2.5)  # the idle timeout, and a margin
            with anyio.fail_after(60):
                while store.dbsize() > base_keys + 5:
                    for _ in store.scan_iter(count=1000):  # a key SCAN meets past its TTL is deleted
                        pass
                    await anyio.sleep(0.25)
            await open_sessions(http, workers.urls, 1)
            after_keys, after_memory, after_rss = (
                store.dbsize(),
                store.info("memory")["used_memory"],
                rss_kib(),
            )
            expired = store.info("stats")["expired_keys"] - expired_before
        print(
            f"\n{SESSIONS} sessions: Redis keys {base_keys} -> {after_keys} ({expired} expired); used_memory "
            f"{base_memory} -> {after_memory} bytes (peak {peak_memory}); this process (3 workers) RSS "
            f"{base_rss} -> {after_rss} KiB (max {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} KiB)"
        )
        assert expired >= SESSIONS  # every session's record was in Redis, and expired
        assert after_keys <= base_keys + 5
        assert after_memory < base_memory + 512 * 1024  # what the sessions used is given back
        assert sum(len(s.peers) for s in workers.servers) == 0  # no worker holds a session
        # KiB: nothing kept per session (~14 KiB each would be 140 MiB of 10,000); below full scale the
        # allocator's noise floor (16 MiB) hides a leak that small
        assert after_rss - base_rss < max(16 * 1024, 64 * 1024 * SESSIONS // 10_000)


def call(rid: int, name: str, arguments: dict[str, object]) -> bytes:
    params = {"name": name, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode()


async def opened_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    opened = await post(http, url, body(INITIALIZE), HEADERS)
    assert opened.status_code == 200
    headers = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
    assert (await post(http, url, body(INITIALIZED), headers)).status_code == 202
    return headers


def session_bytes(store: redis.Redis, session_id: str) -> int:
    """What the session's keys take in Redis (MEMORY USAGE, every sample)."""
    keys = list(store.scan_iter(match=f"*{{{session_id}}}*", count=1000))
    return sum(store.memory_usage(key, samples=0) or 0 for key in keys)


async def test_sessions_idle_after_a_4_mb_result_give_redis_its_memory_back_after_the_retention(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path, ended_retention=1.0) as workers, httpx.AsyncClient(timeout=60) as http:
        store = redis.Redis.from_url(workers.redis_url)
        sessions = [await opened_session(http, workers.urls[i % 3]) for i in range(20)]
        base, expired = store.info("memory")["used_memory"], store.info("stats")["expired_keys"]
        for i, headers in enumerate(sessions):
            url = workers.urls[(i + 1) % 3]
            answered = await post(http, url, call(2, "big", {"size": 4_000_000}), headers)
            assert answered.status_code == 200 and len(answered.content) > 4_000_000
        held = store.info("memory")["used_memory"] - base
        with anyio.fail_after(30):  # the retention is 1 s: Redis drops the data itself, no request needed
            while (left := store.info("memory")["used_memory"] - base) > 1024 * 1024:
                await anyio.sleep(0.25)
        print(f"\n20 idle sessions, one 4 MB result each: Redis used_memory +{held} bytes, then +{left}")
        assert store.info("stats")["expired_keys"] - expired >= 20  # each result was kept, then expired


async def test_an_active_session_keeps_none_of_its_ended_streams_after_the_retention(tmp_path: Path) -> None:
    async with cluster(tmp_path, ended_retention=1.0) as workers, httpx.AsyncClient(timeout=60) as http:
        store = redis.Redis.from_url(workers.redis_url)
        headers = await opened_session(http, workers.urls[0])
        session_id = headers["mcp-session-id"]
        for i in range(100):
            answered = await post(http, workers.urls[i % 3], call(10 + i, "add", {"a": i, "b": 1}), headers)
            assert answered.status_code == 200
        busy = session_bytes(store, session_id)
        with anyio.fail_after(30):
            while (left := session_bytes(store, session_id)) > 1500:  # the record alone is < 1 KB
                await anyio.sleep(0.25)
        print(f"\nafter 100 small calls: the session's keys take {busy} bytes of Redis, then {left}")
        assert sorted(store.scan_iter(match=f"*{{{session_id}}}*")) == [f"mcp:{{{session_id}}}:s".encode()]
