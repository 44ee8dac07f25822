"""Reopening SSE streams the server closed: the server's `retry`, but never a hot loop.

Spec 2025-11-25 transports "Resumability and Redelivery". The hostile peers close every stream at
once with `retry: 0`; the client must still wait at least the Backoff floor, and longer after
streams that brought nothing.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import anyio
import pytest
from test_http_client import Exchange, FakeServer, serving

from mcpkit import MCPError
from mcpkit.client.client import connect_http
from mcpkit.transports.http_client.backoff import Backoff

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

WINDOW = 2.0


def closing_get_server(fresh_ids: bool) -> tuple[FakeServer, list[float]]:
    """Every GET is answered with `retry: 0` (and a new id when `fresh_ids`), then closed at once."""
    opened: list[float] = []
    ids = itertools.count()

    async def handler(x: Exchange) -> bool:
        if x.method != "GET":
            return False
        opened.append(anyio.current_time())
        await x.start(200)
        await x.raw(f"id: g{next(ids)}\nretry: 0\n\n" if fresh_ids else "retry: 0\n\n")
        await x.end()
        return True

    return FakeServer(handler), opened


async def test_a_get_stream_closed_with_retry_0_and_fresh_ids_is_reopened_no_faster_than_the_floor() -> None:
    fake, opened = closing_get_server(fresh_ids=True)
    async with serving(fake) as url, connect_http(url, timeout=5, era="handshake"):
        await anyio.sleep(WINDOW)
    assert 2 <= len(opened) <= WINDOW / 0.25 + 2  # the 250 ms floor; unbounded it was ~1,000 a second


async def test_a_get_stream_that_brings_nothing_is_reopened_with_growing_delays() -> None:
    fake, opened = closing_get_server(fresh_ids=False)
    async with serving(fake) as url, connect_http(url, timeout=5, era="handshake", reconnect_attempts=10_000):
        await anyio.sleep(WINDOW)
    gaps = [b - a for a, b in itertools.pairwise(opened)]
    assert 2 <= len(opened) <= 6  # 0.25, then at least 0.5, 1, 2 ... s
    assert all(later >= earlier * 0.9 for earlier, later in itertools.pairwise(gaps[1:]))


async def test_the_backoff_floor_is_configurable() -> None:
    fake, opened = closing_get_server(fresh_ids=True)
    options: dict[str, Any] = {"backoff": Backoff(floor_ms=800), "era": "handshake"}
    async with serving(fake) as url, connect_http(url, timeout=5, **options):
        await anyio.sleep(WINDOW)
    assert 2 <= len(opened) <= WINDOW / 0.8 + 1.5


async def test_a_resumed_post_stream_closed_with_retry_0_is_polled_no_faster_than_the_floor() -> None:
    resumed: list[float] = []
    ids = itertools.count()

    async def handler(x: Exchange) -> bool:
        if x.message.get("method") == "tools/call":
            await x.start(200)
            await x.raw("id: r0\nretry: 0\n\n")
            await x.end()
            return True
        if x.method == "GET" and "last-event-id" in x.headers:
            resumed.append(anyio.current_time())
            await x.start(200)
            await x.raw(f"id: r{next(ids) + 1}\nretry: 0\n\n")  # "poll": a fresh id, never the answer
            await x.end()
            return True
        return False

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=5, era="handshake") as client:
        with pytest.raises(MCPError):
            await client.call_tool("t", {}, timeout=WINDOW)
    assert 2 <= len(resumed) <= WINDOW / 0.25 + 2


async def test_a_stream_that_delivers_a_message_resets_the_growth() -> None:
    opened: list[float] = []
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    async def handler(x: Exchange) -> bool:
        if x.method != "GET":
            return False
        opened.append(anyio.current_time())
        await x.start(200)
        await x.raw("retry: 0\n\n" if len(opened) % 3 else f"retry: 0\ndata: {note}\n\n")
        await x.end()
        return True

    async with serving(FakeServer(handler)) as url, connect_http(url, timeout=5, era="handshake"):
        await anyio.sleep(3.0)
    # empty, empty, message, empty, ...: waits <=0.5, <=1, then the floor again (not >=1 s), and the
    # listener never gives up, as reconnect_attempts (3) counts only failures in a row.
    assert len(opened) >= 5
    assert 0.2 <= opened[3] - opened[2] < 0.45


def test_backoff_delays_start_at_the_servers_retry_or_the_floor_then_grow_to_the_cap() -> None:
    backoff = Backoff(floor_ms=100, max_ms=1000, factor=2, jitter=0.5)
    assert backoff.delay(0, 0) == 0.1
    assert backoff.delay(300, 0) == 0.3
    no_jitter = [backoff.delay(0, n, rand=lambda: 0.0) for n in range(6)]
    assert no_jitter == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    full_jitter = [backoff.delay(0, n, rand=lambda: 1.0) for n in range(6)]
    assert full_jitter == [0.1, 0.1, 0.2, 0.4, 0.5, 0.5]
    assert backoff.delay(5000, 3) == 5.0  # a server's retry above the cap is still honoured
    assert backoff.delay(0, 10**6, rand=lambda: 0.0) == 1.0


@pytest.mark.parametrize(
    "bad", [{"floor_ms": -1}, {"floor_ms": 10, "max_ms": 5}, {"factor": 0.5}, {"jitter": 1.5}]
)
def test_a_backoff_that_makes_no_sense_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Backoff(**bad)  # type: ignore[arg-type]
