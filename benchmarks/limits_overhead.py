"""What API keys and limits cost per request: `APIKeyVerifier.verify` over key files of several sizes, and
a tools/call through `mcpkit.testing.connect` (in memory, real JSON) with no limit, a RateLimit in memory,
and a RateLimit and a ConcurrencyLimit counting in a local redis-server (started here on a free port).

    python benchmarks/limits_overhead.py [--requests 2000] [--repetitions 5]

Prints the median per-request time (µs) of each repetition; compare the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from mcpkit import Server
from mcpkit.auth import APIKey, APIKeyVerifier, new_api_key
from mcpkit.server.middleware import ConcurrencyLimit, RateLimit
from mcpkit.testing import connect


def build(*limits: object) -> Server:
    server = Server("bench")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    for limit in limits:
        server.middleware.add(limit, methods={"tools/call"})  # type: ignore[arg-type]
    return server


async def per_call_us(server: Server, requests: int) -> float:
    async with connect(server) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        start = time.perf_counter()
        for _ in range(requests):
            await client.call_tool("add", {"a": 1, "b": 2})
        return (time.perf_counter() - start) / requests * 1e6


async def verify_us(keys: int, requests: int) -> float:
    made = [new_api_key() for _ in range(keys)]
    verifier = APIKeyVerifier([APIKey.of(h, f"s{i}") for i, (_, h) in enumerate(made)], audience="x")
    last = made[-1][0]
    start = time.perf_counter()
    for _ in range(requests):
        await verifier.verify(last)
    return (time.perf_counter() - start) / requests * 1e6


def redis_url() -> tuple[subprocess.Popen[bytes], str] | None:
    binary = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/usr/local/sbin")
    if binary is None:
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    directory = tempfile.mkdtemp(prefix="bench-redis-")
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", directory]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


async def main(requests: int, repetitions: int) -> None:
    from mcpkit.cluster import RedisBackplane

    started = redis_url()
    cases: dict[str, Callable[[], Awaitable[float]]] = {
        "verify, 10 keys": lambda: verify_us(10, requests),
        "verify, 1000 keys": lambda: verify_us(1000, requests),
        "tools/call, no limit": lambda: per_call_us(build(), requests),
        "tools/call, RateLimit in memory": lambda: per_call_us(build(RateLimit(1e9, 10**9)), requests),
    }
    if started is not None:
        store = RedisBackplane(started[1]).limits()
        cases["tools/call, RateLimit in Redis"] = lambda: per_call_us(
            build(RateLimit(1e9, 10**9, store=store)), requests
        )
        cases["tools/call, ConcurrencyLimit in Redis"] = lambda: per_call_us(
            build(ConcurrencyLimit(100, store=store)), requests
        )
    try:
        await per_call_us(build(), requests)  # warm up: the first calls pay for imports and caches
        for name, case in cases.items():
            runs = [await case() for _ in range(repetitions)]
            print(
                f"{name:40} median {statistics.median(runs):8.1f} µs  ({', '.join(f'{r:.1f}' for r in runs)})"
            )
    finally:
        if started is not None:
            started[0].terminate()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--repetitions", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.requests, options.repetitions))
