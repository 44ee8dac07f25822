"""The app every worker of the scale-out tests runs: `uvicorn --factory cluster_app:build`.

One mcpkit Server behind StreamableHTTPApp, wrapped so every HTTP response names the worker that
answered (header x-mcpkit-worker, from MCPKIT_WORKER_NAME, which tests/cluster/parts.py sets to w1, w2, ...).
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from mcpkit import Context, Server
from mcpkit.cluster import RedisBackplane
from mcpkit.server.tasks import TaskEngine
from mcpkit.transports.http_server import StreamableHTTPApp
from mcpkit.transports.http_server.asgi import ASGIMessage, Receive, Scope, Send


def worker_name() -> str:
    return os.environ.get("MCPKIT_WORKER_NAME", "unnamed")


def make_server() -> Server:
    ttl = int(os.environ.get("MCPKIT_TASK_TTL_MS", "3600000"))
    server = Server(
        "mcpkit-cluster-test", state_key=b"cluster-test-state-key-32-bytes!", tasks=TaskEngine(ttl_ms=ttl)
    )

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def whoami() -> str:
        """The name of the worker process that ran this call."""
        return worker_name()

    @server.tool()
    async def tick(count: int, interval: float, ctx: Context) -> str:
        """`count` info log notifications, `interval` seconds apart, then "done": a stream whose events
        must reach the client as they are sent (checks that nothing in between buffers the response)."""
        for i in range(count):
            await ctx.info(f"tick {i} from {worker_name()}")
            await anyio.sleep(interval)
        return "done"

    @server.tool()
    async def slow(ctx: Context, n: int, delay: float = 0.05) -> int:
        """`n` progress notifications, `delay` seconds apart, then n; a cancellation leaves a file
        `cancelled-<worker>-<request id>` in MCPKIT_TEST_DIR for the test to find."""
        try:
            for i in range(n):
                await ctx.report_progress(i + 1, n)
                await anyio.sleep(delay)
        except anyio.get_cancelled_exc_class():
            where = os.environ.get("MCPKIT_TEST_DIR")
            if where:
                Path(where, f"cancelled-{worker_name()}-{ctx.request_id}").touch()
            raise
        return n

    @server.tool()
    def grow(name: str) -> str:
        """Adds a tool on this worker: its notifications/tools/list_changed goes to the session's GET
        stream wherever that is open."""
        server.add_tool(lambda: name, name=name)
        return name

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Elicits a name and samples a greeting: two answers the client may POST to other workers."""
        schema = {"type": "object", "properties": {"n": {"type": "string"}}}
        elicited = await ctx.elicit("your name?", schema)
        sampled = await ctx.sample("say hi", max_tokens=5)
        return f"{elicited.content} / {sampled['content']['text']}"

    @server.tool()
    async def emit(ctx: Context, n: int, delay: float = 0.02) -> int:
        """`n` notifications for the session's standalone stream (related to no request)."""
        for i in range(n):
            await ctx.session.notify("notifications/message", {"level": "info", "data": i})
            await anyio.sleep(delay)
        return n

    @server.tool()
    async def touch(uri: str) -> str:
        await server.notify_resource_updated(uri)
        return "touched"

    @server.tool(task=True)
    async def long_task(seconds: float, ctx: Context) -> str:
        """Works `seconds` as a task; a cancellation leaves `task-cancelled-<worker>` in MCPKIT_TEST_DIR."""
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            where = os.environ.get("MCPKIT_TEST_DIR")
            if where:
                Path(where, f"task-cancelled-{worker_name()}").touch()
            raise
        return f"worked {seconds} s on {worker_name()}"

    @server.resource("mem://note")
    def note() -> str:
        return "hello"

    return server


def make_app(server: Server) -> StreamableHTTPApp:
    """The worker's StreamableHTTPApp: sessions shared in the Redis at MCPKIT_REDIS_URL, when set."""
    url = os.environ.get("MCPKIT_REDIS_URL")
    backplane = None
    if url:
        heartbeat = float(os.environ.get("MCPKIT_HEARTBEAT", "0.2"))
        dead_after = float(os.environ.get("MCPKIT_DEAD_AFTER", "1.0"))
        idle = float(os.environ.get("MCPKIT_IDLE_TIMEOUT", "1800"))
        backplane = RedisBackplane(
            url, worker=worker_name(), heartbeat=heartbeat, dead_after=dead_after, idle_timeout=idle
        )
        backplane.adopt(server)
    return StreamableHTTPApp(server, allowed_hosts=["*"], allowed_origins=["*"], backplane=backplane)


class WorkerHeader:
    """ASGI middleware: adds `x-mcpkit-worker: <worker name>` to every HTTP response."""

    def __init__(self, app: StreamableHTTPApp, name: str) -> None:
        self.app = app
        self.header = (b"x-mcpkit-worker", name.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def named(message: ASGIMessage) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), self.header]}
            await send(message)

        await self.app(scope, receive, named)


def build() -> WorkerHeader:
    """The uvicorn factory."""
    return WorkerHeader(make_app(make_server()), worker_name())
