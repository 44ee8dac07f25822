"""Server(lifespan=...): entered once before anything is served (by the HTTP app at its startup, or by the
first session), shared by every session, left after the last; `ctx.lifespan` is what it yielded."""

from __future__ import annotations

from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

import peers
from mcpkit import Context, Server
from mcpkit.testing import connect
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS, INITIALIZE

pytestmark = pytest.mark.anyio


class Pool:
    def __init__(self) -> None:
        self.opened = 0
        self.closed = 0


def build(pool: Pool, fail: bool = False) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        if fail:
            raise RuntimeError("no database")
        pool.opened += 1
        try:
            yield {"db": f"pool of {server.info['name']}"}
        finally:
            pool.closed += 1

    server = Server("shop", lifespan=lifespan)

    @server.tool()
    def which(ctx: Context) -> str:
        return str(ctx.lifespan["db"])

    return server


@pytest.mark.both_loops
async def test_a_session_enters_the_lifespan_and_handlers_reach_its_value() -> None:
    pool = Pool()
    server = build(pool)
    async with connect(server) as one, connect(server) as two:
        assert (await one.call_tool("which"))["content"][0]["text"] == "pool of shop"
        assert (await two.call_tool("which"))["content"][0]["text"] == "pool of shop"
        assert (pool.opened, pool.closed) == (1, 0)  # shared by both sessions
    with anyio.fail_after(5):
        while pool.closed == 0:
            await anyio.sleep(0.01)
    assert (pool.opened, pool.closed) == (1, 1)


@pytest.mark.both_loops
async def test_the_http_app_opens_it_at_startup_and_closes_it_at_shutdown() -> None:
    pool = Pool()
    async with peers.serving(StreamableHTTPApp(build(pool)), graceful=True) as url:  # runs the lifespan's end
        assert (pool.opened, pool.closed) == (1, 0)  # before any request
        for _ in range(2):  # two sessions
            async with httpx.AsyncClient() as http:
                assert (await http.post(url, json=INITIALIZE, headers=HEADERS)).status_code == 200
        assert (pool.opened, pool.closed) == (1, 0)
    assert (pool.opened, pool.closed) == (1, 1)


@pytest.mark.both_loops
async def test_a_lifespan_that_fails_fails_the_http_apps_startup() -> None:
    app = StreamableHTTPApp(build(Pool(), fail=True))
    sent: list[MutableMapping[str, Any]] = []
    messages = iter([{"type": "lifespan.startup"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await app({"type": "lifespan"}, receive, send)
    assert sent == [{"type": "lifespan.startup.failed", "message": "no database"}]


@pytest.mark.both_loops
async def test_without_a_lifespan_ctx_lifespan_says_so() -> None:
    server = Server("bare")

    @server.tool()
    def which(ctx: Context) -> str:
        return str(ctx.lifespan)

    async with connect(server) as client:
        result = await client.call_tool("which")
    assert result["isError"] is True and "without a lifespan" in result["content"][0]["text"]
