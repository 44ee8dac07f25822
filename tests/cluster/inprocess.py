"""Three workers in this process sharing one real Redis: three StreamableHTTPApps, each with its own
RedisBackplane, on three real uvicorn servers, behind a RotatingProxy (each HTTP request to the next
worker). Being in one process lets a test reach a worker's Server directly and see what handlers saw.

`STORE` chooses what backs them: "redis" (one redis-server) or "redis-cluster" (a local Redis Cluster of
three primaries, tests/cluster/redis_cluster.py), so a test runs unchanged on either."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import anyio

import peers
from cluster.parts import RedisProcess, redis_server
from cluster.redis_cluster import redis_cluster
from cluster.rotating_proxy import RotatingProxy
from mcpkit import Context, Server
from mcpkit.cluster import RedisBackplane
from mcpkit.transports.http_server import StreamableHTTPApp

STATE_KEY = b"k" * 32
STORE: ContextVar[str] = ContextVar("STORE", default="redis")


class Seen:
    """What the handlers of every worker saw (they all run in this process)."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.started = anyio.Event()
        self.release = anyio.Event()  # lets `hold` return
        self.holding = 0  # `hold` calls running now, on every worker
        self.most_held = 0
        self.gate = anyio.Event()  # what `gated` tasks wait for
        self.resumed: list[str] = []  # the tags of `confirm` tasks whose remainder ran, once per run
        self.step, self.steps = anyio.create_memory_object_stream[None](100)  # what `paced` waits for


def make_server(seen: Seen, name: str, **options: Any) -> Server:
    server = Server("cluster", state_key=STATE_KEY, **options)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def whoami() -> str:
        return name

    @server.tool()
    def session_object(ctx: Context) -> str:
        """The Session object serving the call: the same while a worker keeps the session warm."""
        return str(id(ctx.session))

    @server.tool()
    async def hold(seconds: float) -> str:
        seen.holding += 1
        seen.most_held = max(seen.most_held, seen.holding)
        try:
            await anyio.sleep(seconds)
        finally:
            seen.holding -= 1
        return "held"

    @server.tool()
    async def ask(ctx: Context) -> str:
        elicited = await ctx.elicit("your name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        sampled = await ctx.sample("say hi", max_tokens=5)
        return f"{elicited.content} / {sampled['content']['text']}"

    @server.tool()
    async def slow(ctx: Context, n: int, delay: float = 0.05) -> int:
        seen.started.set()
        try:
            for i in range(n):
                await ctx.report_progress(i + 1, n)
                await anyio.sleep(delay)
        except anyio.get_cancelled_exc_class():
            seen.cancelled.append(name)
            raise
        return n

    @server.tool()
    async def paced(ctx: Context, n: int) -> int:
        """A progress notification each time the test sends a `step`, `n` times."""
        for i in range(n):
            await seen.steps.receive()
            await ctx.report_progress(i + 1, n)
        return n

    @server.tool()
    async def chatter(ctx: Context) -> str:
        await ctx.debug("quiet")
        await ctx.error("loud")
        return "said"

    @server.tool()
    async def announce(ctx: Context, n: int) -> int:
        """`n` notifications related to no request: for the session's standalone stream."""
        for i in range(n):
            await ctx.session.notify("notifications/message", {"level": "info", "data": i})
        return n

    @server.tool()
    def big(size: int) -> str:
        return "x" * size

    @server.tool()
    async def hold_big(ctx: Context, size: int) -> str:
        """A progress message of `size` bytes on its open stream, then the answer once `release` is set."""
        await ctx.report_progress(1, 2, "x" * size)
        await seen.release.wait()
        return "released"

    @server.tool()
    def principal(ctx: Context) -> str:
        return (ctx.auth.subject if ctx.auth is not None else None) or "nobody"

    @server.tool(task=True)
    async def confirm(ctx: Context, tag: str) -> str:
        """A task that asks, then (in the leg after the answer) notes that its remainder ran."""
        answer = await ctx.elicit("sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        seen.resumed.append(tag)
        return f"{tag}: {answer.action}"

    @server.tool(task=True)
    async def survey(ctx: Context) -> str:
        """A 2025-11-25 task that reports progress around asking (long after tools/call was answered)."""
        await ctx.report_progress(1, 2)
        answer = await ctx.elicit("sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        await ctx.report_progress(2, 2, "answered")
        return f"survey: {answer.action} on {name}"

    @server.tool(task=True)
    async def gated() -> str:
        await seen.gate.wait()
        return "through"

    @server.tool(task=True)
    def blob(kib: int) -> str:
        return "x" * (kib * 1024)

    @server.resource("mem://note")
    def note() -> str:
        return "hello"

    @server.resource("mem://any/{name}")
    def any_note(name: str) -> str:
        return name

    return server


class Workers:
    def __init__(
        self,
        servers: list[Server],
        urls: list[str],
        proxy: RotatingProxy,
        proxy_url: str,
        seen: Seen,
        redis: RedisProcess,
        redis_url: str,
    ) -> None:
        self.servers, self.urls, self.proxy, self.url = servers, urls, proxy, proxy_url
        self.seen, self.redis, self.redis_url = seen, redis, redis_url


@contextmanager
def backing_store(
    tmp_path: Path, appendonly: bool, backing: tuple[RedisProcess, str] | None, backplane: dict[str, Any]
) -> Iterator[tuple[RedisProcess, str]]:
    """The Redis the workers share (per `STORE`, or the test's own `backing`): its first server process
    and its URL; `backplane` gets what a RedisBackplane needs to reach it."""
    if backing is not None:
        yield backing
        return
    with ExitStack() as stack:
        if STORE.get() == "redis-cluster":
            local = stack.enter_context(redis_cluster(tmp_path))
            backplane["cluster"] = True
            yield local.nodes[0], local.url
            return
        redis = stack.enter_context(redis_server(tmp_path, appendonly=appendonly))
        yield redis, redis.url


@asynccontextmanager
async def cluster(
    tmp_path: Path,
    n: int = 3,
    *,
    appendonly: bool = False,
    wrap: Any = None,
    server_options: dict[str, Any] | None = None,
    backing: tuple[RedisProcess, str] | None = None,
    **backplane: Any,
) -> AsyncIterator[Workers]:
    """`n` workers on one Redis (a Redis Cluster when `STORE` says so; `backing`: the test's own redis
    process and the URL the workers reach it at); `wrap(app)` wraps each worker's app (an auth layer,
    say); `server_options`: each worker's Server's options."""
    with backing_store(tmp_path, appendonly, backing, backplane) as (redis, redis_url):
        seen = Seen()
        async with AsyncExitStack() as stack:
            servers, urls = [], []
            for i in range(n):
                options = {"heartbeat": 0.2, "dead_after": 1.0, **backplane}
                plane = RedisBackplane(redis_url, worker=f"w{i}", **options)
                parts = {"peers": plane.peers(), "tasks": plane.tasks(), **(server_options or {})}
                server = make_server(seen, f"w{i}", **parts)
                servers.append(server)
                app = StreamableHTTPApp(server, backplane=plane)
                served = wrap(app) if wrap is not None else app
                urls.append(await stack.enter_async_context(peers.serving(served)))
            proxy = RotatingProxy(urls)
            proxy_url = await stack.enter_async_context(peers.serving(proxy))
            yield Workers(servers, urls, proxy, proxy_url, seen, redis, redis_url)
