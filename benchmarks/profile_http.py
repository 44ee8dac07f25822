#!/usr/bin/env python3
"""The Streamable HTTP apps' own per-request cost, without a socket or uvicorn: ASGI calls in process.

PYTHONPATH=src python benchmarks/profile_http.py KIND [--calls N] [--profile] [--trace] [--idle N]

KIND is one of servers/http_app.py's kinds. Prints µs per sequential tools/call; `--profile` runs the
calls under cProfile and prints the top functions by own time; `--trace` follows one warm call with
sys.setprofile and prints the mcpkit functions and files it runs through, the event loop turns it takes
and the JSON parses (orjson.loads) it makes; `--idle N` opens N more sessions and prints the Python heap
each one keeps (tracemalloc), and the largest allocation sites.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from http_app import make_app

PROTOCOL = "2025-06-18"


async def _post(app: Any, body: dict[str, Any], sid: str | None) -> tuple[int, dict[bytes, bytes], bytes]:
    raw = orjson.dumps(body)
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-length", str(len(raw)).encode()),
    ]
    if sid is not None:
        headers += [(b"mcp-session-id", sid.encode()), (b"mcp-protocol-version", PROTOCOL.encode())]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    done = asyncio.Event()
    sent = False
    status, out_headers, chunks = 0, {}, []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            out_headers.update(dict(message.get("headers", [])))
        else:
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    done.set()
    return status, out_headers, b"".join(chunks)


async def _lifespan(app: Any, started: asyncio.Event, stop: asyncio.Event) -> None:
    queue = [{"type": "lifespan.startup"}]

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop()
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            started.set()

    await app({"type": "lifespan"}, receive, send)


async def _open_session(app: Any) -> str | None:
    init = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "p", "version": "0"}}
    first = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    _, headers, _ = await _post(app, first, sid=None)
    sid = headers.get(b"mcp-session-id", b"").decode() or None
    await _post(app, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    return sid


async def _idle(app: Any, n: int) -> None:
    await asyncio.sleep(0.05)
    tracemalloc.start(8)
    before = tracemalloc.take_snapshot()
    sessions = [await _open_session(app) for _ in range(n)]
    await asyncio.sleep(0.05)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stats = after.compare_to(before, "lineno")
    total = sum(stat.size_diff for stat in stats)
    print(f"{len(sessions)} idle sessions: {total / n / 1024:.2f} KiB each (Python heap, tracemalloc)")
    for stat in stats[:12]:
        print(f"  {stat.size_diff / n:8.0f} B  {stat.traceback[0]}")


class CallTrace:
    """What one call runs through: mcpkit function calls (and distinct functions), files, loop turns,
    JSON parses. Installed with sys.setprofile and threading's hook so every task on the loop counts."""

    def __init__(self) -> None:
        self.calls = 0
        self.functions: set[tuple[str, str, int]] = set()
        self.files: set[str] = set()
        self.turns = 0
        self.parses = 0

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", "") == "loads" and arg.__module__ == "orjson":
            self.parses += 1
            return
        if event != "call":
            return
        code = frame.f_code
        if code.co_name == "_run_once":
            self.turns += 1
        elif "/mcpkit/" in code.co_filename:
            self.calls += 1
            self.functions.add((code.co_filename, code.co_name, code.co_firstlineno))
            self.files.add(code.co_filename.split("/mcpkit/", 1)[1])

    def report(self) -> str:
        files = ", ".join(sorted(self.files))
        return (
            f"one warm tools/call: {self.calls} mcpkit function calls ({len(self.functions)} functions) "
            f"in {len(self.files)} files, {self.turns} loop turns, {self.parses} JSON parses"
            f"\n  files: {files}"
        )


async def _traced_call(app: Any, sid: str | None, rid: int) -> str:
    trace = CallTrace()
    call = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
    }
    sys.setprofile(trace)
    try:
        status, _, body = await _post(app, call, sid)
        await asyncio.sleep(0)  # the turn that finishes the handler's task
    finally:
        sys.setprofile(None)
    if status != 200 or b'"result":3' not in body:
        raise SystemExit(f"bad answer {status} {body!r}")
    return trace.report()


async def run(kind: str, calls: int, profile: bool, idle: int, trace: bool = False) -> None:
    app, lifespan = make_app(kind)
    started, stop = asyncio.Event(), asyncio.Event()
    life = asyncio.create_task(_lifespan(app, started, stop)) if lifespan == "on" else None
    if life is None:
        started.set()
    await started.wait()
    sid = await _open_session(app)
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    t0 = time.perf_counter()
    for i in range(1, calls + 1):
        call = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
        status, _, body = await _post(app, call, sid)
        if status != 200 or b'"result":3' not in body:
            raise SystemExit(f"bad answer {status} {body!r}")
    elapsed = time.perf_counter() - t0
    if trace:
        print(await _traced_call(app, sid, calls + 1))
    if profiler is not None:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    print(f"{kind}: {1e6 * elapsed / calls:.1f} µs per tools/call ({calls} calls)")
    if idle:
        await _idle(app, idle)
    stop.set()
    if life is not None:
        await life


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("kind")
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--trace", action="store_true")
    p.add_argument("--idle", type=int, default=0)
    args = p.parse_args()
    asyncio.run(run(args.kind, args.calls, args.profile, args.idle, args.trace))


if __name__ == "__main__":
    main()
