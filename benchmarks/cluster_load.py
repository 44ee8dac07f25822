"""Scale-out on Redis: HTTP tools/call at C=64 through haproxy (round robin per request, no stickiness) in
front of 1, 2 and 3 worker processes sharing their sessions in one redis-server, beside the same app with no
backplane (one worker, through the same haproxy), and the Redis round trips one request costs. Beside the
rate, the CPU one call costs the workers (their utime + stime, from /proc) and Redis (INFO cpu): on a
machine of few cores, calls per second cannot show scaling, the CPU per call can.

    .venv/bin/python benchmarks/cluster_load.py [--calls 6000] [--repeat 3]

Round trips are counted exactly with MONITOR on a separate sample (commands a worker sends, not the
commands its Lua scripts run), over sequential calls in one session, SSE and JSON responses alike.
Every answer is verified (http_load's checks). On a 2-core machine the point is the cost per request
and correctness, not a speed-up: the workers, haproxy, Redis and the load generator share the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent / "tests" / "cluster")]

import redis  # noqa: E402
from http_load import HTTPConn, concurrent_calls  # noqa: E402
from parts import cluster, redis_server  # noqa: E402


def calls_per_second(ports: list[int], calls: int) -> float:
    """At C=64 through each of `ports` at once (one: haproxy; several: each session on one worker)."""

    async def spread() -> float:
        share = 64 // len(ports)
        runs = await asyncio.gather(*(concurrent_calls(port, share, calls // len(ports)) for port in ports))
        return sum(rate for rate, _p99, _cpu in runs)

    return asyncio.run(spread())


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time (user + system) the processes have used, from /proc/PID/stat (fields 14 and 15)."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        used += int(fields[11]) + int(fields[12])
    return used / ticks


def redis_cpu_seconds(url: str) -> float:
    info = redis.Redis.from_url(url).info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def measured(group: Any, redis_url: str, calls: int, sticky: bool) -> tuple[float, float, float]:
    """(calls/s, worker CPU µs per call, Redis CPU µs per call) of one run at C=64; `sticky`: each
    session's calls straight to one worker, not through haproxy."""
    workers, store = cpu_seconds(group.workers.pids), redis_cpu_seconds(redis_url)
    rate = calls_per_second(group.workers.ports if sticky else [group.proxy.port], calls)
    worker_us = (cpu_seconds(group.workers.pids) - workers) / calls * 1e6
    return rate, worker_us, (redis_cpu_seconds(redis_url) - store) / calls * 1e6


def round_trips(redis_url: str, port: int, calls: int = 50) -> float:
    """Commands the workers send Redis per tools/call (heartbeats left out), by MONITOR."""
    client = redis.Redis.from_url(redis_url)
    seen: list[str] = []
    stop = threading.Event()

    def monitor() -> None:
        with client.monitor() as m:
            for command in m.listen():
                if stop.is_set():
                    return
                if start.is_set():
                    seen.append(f"{command['client_type']} {command['command']}")

    async def sample() -> None:
        conn = HTTPConn(port)
        await conn.open()
        await conn.initialize()
        await asyncio.sleep(0.3)
        start.set()
        for i in range(calls):
            await conn.call("tools/call", {"name": "add", "arguments": {"a": i, "b": 1}})
        conn.close()

    start = threading.Event()
    thread = threading.Thread(target=monitor, daemon=True)
    thread.start()
    asyncio.run(sample())
    stop.set()
    client.set("bench:stop-monitor", b"1")  # wakes the MONITOR reader so it sees `stop`
    thread.join(5)
    own = [c for c in seen if not c.startswith("lua") and " SET mcp:alive" not in c and "bench:stop" not in c]
    return len(own) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, redis_server(tmp) as store:
        shared = {"MCPKIT_REDIS_URL": store.url}
        setups: list[tuple[str, int, dict[str, str], bool]] = [
            ("no backplane, 1 worker", 1, {}, False),
            *[(f"Redis, {n} worker(s)", n, shared, False) for n in (1, 2, 3)],
            # what three processes on this machine cost a call, Redis or not: the sessions stay put
            ("no backplane, 3 workers, each session on one", 3, {}, True),
            ("Redis, 3 workers, each session on one", 3, shared, True),
        ]
        for _ in range(args.repeat):
            for label, n, env, sticky in setups:
                with cluster(n, env=env, tmp_dir=tmp) as group:
                    rows.setdefault(label, []).append(measured(group, store.url, args.calls, sticky))
        with cluster(3, env={"MCPKIT_REDIS_URL": store.url}, tmp_dir=tmp) as group:
            trips = round_trips(store.url, group.proxy.port)
    columns = ["calls/s", "worker CPU per call (µs)", "Redis CPU per call (µs)"]
    print("| setup (haproxy, C=64, SSE tools/call) | " + " | ".join(columns) + " |")
    print("|---|---|---|---|")
    for label, runs in rows.items():
        rate, worker, store_cpu = (statistics.median(column) for column in zip(*runs, strict=True))
        print(f"| {label} | {rate:,.0f} | {worker:,.0f} | {store_cpu:,.0f} |")
    print(f"\nRedis commands sent per SSE tools/call (MONITOR, scripts' own commands excluded): {trips:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
