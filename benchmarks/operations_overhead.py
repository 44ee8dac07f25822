"""What `StreamableHTTPApp(operations=Operations())` costs per request, with no network in the way: a
handshake-era tools/call POSTed straight into the ASGI app, JSON and SSE answers, operations off and on.

    python benchmarks/operations_overhead.py [--requests 3000] [--repetitions 5]

Prints the sorted per-request times (µs) of each repetition; compare the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from mcpkit import Server
from mcpkit.transports.http_server import Operations, StreamableHTTPApp

HEADERS = [
    (b"host", b"localhost"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}


async def add(a: int, b: int) -> int:
    return a + b


def message(rid: int | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        body["id"] = rid
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


async def post(app: Any, body: bytes, headers: list[tuple[bytes, bytes]]) -> dict[bytes, bytes]:
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    got: dict[bytes, bytes] = {}

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(event: dict[str, Any]) -> None:
        if event["type"] == "http.response.start":
            got.update(event["headers"])

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": ("127.0.0.1", 1)}
    await app(scope, receive, send)
    return got


async def per_request(operations: bool, json_response: bool, requests: int) -> float:
    server = Server("bench")
    server.add_tool(add)
    ops = Operations(drain_on_sigterm=False) if operations else None
    app = StreamableHTTPApp(server, json_response=json_response, operations=ops)
    started, events = asyncio.Event(), asyncio.Queue[dict[str, str]]()
    await events.put({"type": "lifespan.startup"})

    async def lifespan_send(event: dict[str, Any]) -> None:
        if event["type"] == "lifespan.startup.complete":
            started.set()

    lifespan = asyncio.create_task(app({"type": "lifespan"}, events.get, lifespan_send))
    await started.wait()
    sid = (await post(app, message(1, "initialize", INIT), HEADERS))[b"mcp-session-id"]
    session = [*HEADERS, (b"mcp-session-id", sid), (b"mcp-protocol-version", b"2025-11-25")]
    await post(app, message(None, "notifications/initialized"), session)
    call = message(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    for _ in range(300):
        await post(app, call, session)
    start = time.perf_counter()
    for _ in range(requests):
        await post(app, call, session)
    elapsed = time.perf_counter() - start
    await events.put({"type": "lifespan.shutdown"})
    await lifespan
    return elapsed / requests * 1e6


async def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--requests", type=int, default=3000)
    options.add_argument("--repetitions", type=int, default=5)
    args = options.parse_args()
    for json_response in (True, False):
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.repetitions):
            for operations in (False, True):
                times[operations].append(await per_request(operations, json_response, args.requests))
        label = "json" if json_response else "sse "
        for operations, measured in times.items():
            shown = ", ".join(f"{t:.1f}" for t in sorted(measured))
            print(f"{label} operations {'on ' if operations else 'off'}: µs/request [{shown}]")


if __name__ == "__main__":
    asyncio.run(main())
