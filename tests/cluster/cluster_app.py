"""The app every worker of the scale-out tests runs: `uvicorn --factory cluster_app:build`.

One mcpkit Server behind StreamableHTTPApp, wrapped so every HTTP response names the worker that
answered (header x-mcpkit-worker, from MCPKIT_WORKER_NAME, which tests/cluster/parts.py sets to w1, w2, ...).
"""

from __future__ import annotations

import os

import anyio

from mcpkit import Context, Server
from mcpkit.transports.http_server import StreamableHTTPApp
from mcpkit.transports.http_server.asgi import ASGIMessage, Receive, Scope, Send


def worker_name() -> str:
    return os.environ.get("MCPKIT_WORKER_NAME", "unnamed")


def make_server() -> Server:
    server = Server("mcpkit-cluster-test")

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

    return server


def make_app(server: Server) -> StreamableHTTPApp:
    """The one place the worker's StreamableHTTPApp is built.

    BACKPLANE GOES HERE: the shared-state backplane (built from the environment variable
    MCPKIT_REDIS_URL, when set) is to be passed as `backplane=...` to StreamableHTTPApp below.
    """
    return StreamableHTTPApp(server, allowed_hosts=["*"], allowed_origins=["*"])


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
