#!/usr/bin/env python3
"""Server CPU per tools/call over Streamable HTTP: a steadier figure than calls/s on a shared machine.

python benchmarks/http_cpu.py KIND [--concurrency C] [--calls N] [--p50]

Starts `servers/http_app.py KIND` under uvicorn (as http_load.py does, with this tree's src), warms it with
500 calls, then drives N tools/call over C sessions and prints calls/s and the server process's user and
system CPU per call (from /proc/<pid>/stat, so Linux only; clock ticks are 10 ms, so use N of a few
thousand). Calls/s swings with whatever else the machine runs; CPU time spent by the server per call
swings much less, which is what a comparison of two trees (run each tree's own copy, interleaved) needs.
`--p50` instead runs N sequential calls in one session and prints their median latency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from pathlib import Path

import http_load

TREE = Path(__file__).resolve().parent.parent


def _cpu_seconds(pid: int) -> tuple[float, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=http_load.KINDS)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--p50", action="store_true")
    args = parser.parse_args()
    server = http_load.HTTPServer(args.kind, TREE)
    try:
        if args.p50:
            lat: list[float] = []
            asyncio.run(http_load._session_loop(server.port, 100, 0, []))
            asyncio.run(http_load._session_loop(server.port, args.calls, 1000, lat))
            print(f"{args.kind} C=1 p50 {statistics.median(lat) * 1e6:.0f} µs")
            return
        asyncio.run(http_load.concurrent_calls(server.port, args.concurrency, 500))
        user0, sys0 = _cpu_seconds(server.proc.pid)
        cps, _, _ = asyncio.run(http_load.concurrent_calls(server.port, args.concurrency, args.calls))
        user1, sys1 = _cpu_seconds(server.proc.pid)
    finally:
        server.close()
    n = args.calls
    print(
        f"{args.kind} C={args.concurrency} {cps:.0f} calls/s, server CPU per call: user "
        f"{(user1 - user0) * 1e6 / n:.1f} µs, system {(sys1 - sys0) * 1e6 / n:.1f} µs"
    )


if __name__ == "__main__":
    main()
