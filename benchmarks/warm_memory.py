"""What a warm session costs a worker's memory (RedisBackplane(warm_sessions=...), cluster/warm.py): one
app in this process on a real redis-server, driven through ASGI without a server; `n` sessions each
initialized and called once, the process's RSS before and after, with the sessions kept warm or not.

    .venv/bin/python benchmarks/warm_memory.py [--sessions 2000] [--warm 0 3000]

Each setting runs in a process of its own (an allocator that grew for one run would hide the next)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests"), str(HERE.parent / "tests" / "cluster")]

import orjson  # noqa: E402

from mcpkit import Server  # noqa: E402
from mcpkit.cluster import RedisBackplane  # noqa: E402
from mcpkit.transports.http_server import StreamableHTTPApp  # noqa: E402

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}
CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}


def rss_kib() -> int:
    return int(Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0])


async def post(app: Any, message: dict[str, Any], session_id: str | None = None) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
    headers += [(b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", b"2025-06-18")]
    if session_id is not None:
        headers.append((b"mcp-session-id", session_id.encode()))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "query_string": b""}
    body, answer = orjson.dumps(message), {"headers": [], "body": b""}
    sent, gone = False, asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(event: dict[str, Any]) -> None:
        if event["type"] == "http.response.start":
            answer["headers"] = event["headers"]
        else:
            answer["body"] += event.get("body", b"")

    await app(scope, receive, send)
    gone.set()
    return answer


async def one_session(app: Any) -> None:
    opened = await post(app, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    session_id = dict(opened["headers"])[b"mcp-session-id"].decode()
    called = await post(app, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL}, session_id)
    if b'"result":3' not in called["body"]:
        raise SystemExit(f"unexpected answer: {called['body']!r}")


async def measure(url: str, warm: int, sessions: int) -> float:
    plane = RedisBackplane(url, warm_sessions=warm)
    server = Server("memory", peers=plane.peers(), tasks=plane.tasks())

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    app = StreamableHTTPApp(server, backplane=plane, allowed_hosts=["*"], allowed_origins=["*"])
    lifespan: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    started = asyncio.Event()

    async def told(event: dict[str, Any]) -> None:
        if event["type"] == "lifespan.startup.complete":
            started.set()

    await lifespan.put({"type": "lifespan.startup"})
    running = asyncio.create_task(app({"type": "lifespan"}, lifespan.get, told))
    await started.wait()
    for _ in range(200):  # the code paths, pools and allocator first
        await one_session(app)
    gc.collect()
    before = rss_kib()
    for _ in range(sessions):
        await one_session(app)
    gc.collect()
    grown = (rss_kib() - before) / sessions
    await lifespan.put({"type": "lifespan.shutdown"})
    await asyncio.wait_for(running, 10)
    return grown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--warm", type=int, nargs="*", default=[0, 3000])
    parser.add_argument("--url", help=argparse.SUPPRESS)  # one run, in a child process
    args = parser.parse_args(argv)
    if args.url:
        print(asyncio.run(measure(args.url, args.warm[0], args.sessions)))
        return 0
    from parts import redis_server

    with tempfile.TemporaryDirectory() as tmp, redis_server(tmp) as store:
        for warm in args.warm:
            child = [sys.executable, __file__, "--url", store.url, "--warm", str(warm)]
            out = subprocess.run([*child, "--sessions", str(args.sessions)], capture_output=True, text=True)
            grown = float(out.stdout.strip().splitlines()[-1])
            print(f"warm_sessions={warm}: {args.sessions} sessions, RSS +{grown:.1f} KiB per session")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
