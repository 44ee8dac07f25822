"""One client cannot starve the others: per-session caps on requests in flight and on worker threads
(real uvicorn; the flooding client is an ordinary httpx client sending many POSTs at once)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from test_http_server import call, events, open_session, running

from mcpkit import Server
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def blocking_server(gate: threading.Event, **options: Any) -> Server:
    server = Server("fairness", **options)

    @server.tool()
    def slow() -> str:
        gate.wait(30)  # a sync tool holding its worker thread until the test lets go
        return "slow"

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    return server


@asynccontextmanager
async def flooded(
    server: Server, gate: threading.Event, floods: int
) -> AsyncIterator[tuple[httpx.AsyncClient, str, list[dict[str, Any]]]]:
    """Session A sends `floods` slow calls at once; yields (client, url, A's answers so far)."""
    answers: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=floods + 10)
    async with (
        running(StreamableHTTPApp(server)) as url,
        httpx.AsyncClient(timeout=40, limits=limits) as http,
    ):
        a = await open_session(http, url)

        async def one(rid: int) -> None:
            response = await http.post(url, content=call(rid, "slow"), headers=a)
            answers.extend(events(response.content))

        try:
            async with anyio.create_task_group() as tg:
                for rid in range(1, floods + 1):
                    tg.start_soon(one, rid)
                yield http, url, answers
                gate.set()
        finally:
            gate.set()


async def test_a_flooding_session_gets_server_busy_beyond_its_cap_while_another_is_served() -> None:
    gate = threading.Event()
    server = blocking_server(gate, max_in_flight=10)
    async with flooded(server, gate, 40) as (http, url, answers):
        with anyio.fail_after(10):
            while len(answers) < 30:  # every request past the cap is refused at once
                await anyio.sleep(0.02)
        b = await open_session(http, url)
        with anyio.fail_after(10):
            other = await http.post(url, content=call(1, "add", {"a": 2, "b": 3}), headers=b)
        assert events(other.content)[0]["result"]["content"][0]["text"] == "5"
        assert len(answers) == 30  # A's ten in flight are still running
    busy = [m["error"] for m in answers if "error" in m]
    assert len(busy) == 30 and {e["code"] for e in busy} == {-32010}
    assert "10 requests of this session are already in flight" in busy[0]["message"]
    assert busy[0]["data"] == {"maxInFlight": 10}
    assert sum(1 for m in answers if "result" in m) == 10


async def test_one_sessions_sync_tools_cannot_take_every_worker_thread() -> None:
    gate = threading.Event()
    # 60 slow sync calls would hold all 40 of anyio's worker threads without the per-session share
    server = blocking_server(gate, max_in_flight=None, max_worker_threads=4)
    async with flooded(server, gate, 60) as (http, url, answers):
        await anyio.sleep(0.5)  # let the flood reach the tools
        b = await open_session(http, url)
        with anyio.fail_after(10):  # served, instead of waiting for A's threads to come free
            other = await http.post(url, content=call(1, "add", {"a": 2, "b": 3}), headers=b)
        assert events(other.content)[0]["result"]["content"][0]["text"] == "5"
        assert answers == []  # A's calls are all still waiting or running
    assert len(answers) == 60 and all(m["result"]["content"][0]["text"] == "slow" for m in answers)
