"""GET streams on a cluster (mcpkit.cluster.tails) against a real Redis and three real uvicorn workers:
what a standalone GET delivers, when a resumption ends, what an idle stream costs Redis."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import Workers, cluster
from cluster.test_cluster_sessions import call, initialize, with_session
from mcpkit.protocol.sse import SSEDecoder

pytestmark = pytest.mark.anyio

UPDATED = "notifications/resources/updated"


def get_headers(session_id: str, last_event_id: str | None = None) -> dict[str, str]:
    headers = {**with_session(session_id), "accept": "text/event-stream"}
    return headers | ({"last-event-id": last_event_id} if last_event_id is not None else {})


class Reader:
    """The messages of one SSE response, read as they come."""

    def __init__(self, response: httpx.Response) -> None:
        self.response, self.decoder = response, SSEDecoder()
        self.chunks = response.aiter_bytes()
        self.got: list[tuple[str, dict[str, Any]]] = []

    async def until(self, done: Any, timeout: float = 10) -> list[dict[str, Any]]:
        """Read until `done(messages so far)`; the messages."""
        with anyio.fail_after(timeout):
            while not done([m for _, m in self.got]):
                chunk = await self.chunks.__anext__()
                for event in self.decoder.feed(chunk):
                    if event.data:
                        self.got.append((event.id or "", json.loads(event.data)))
        return [m for _, m in self.got]


@asynccontextmanager
async def get_stream(
    http: httpx.AsyncClient, url: str, session_id: str, last_event_id: str | None = None
) -> AsyncIterator[Reader]:
    async with http.stream("GET", url, headers=get_headers(session_id, last_event_id)) as response:
        assert response.status_code == 200
        yield Reader(response)


def announced(messages: list[dict[str, Any]]) -> list[Any]:
    return [m["params"]["data"] for m in messages if m.get("method") == "notifications/message"]


def updated(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("method") == UPDATED for m in messages)


async def subscribed_session(http: httpx.AsyncClient, workers: Workers) -> str:
    session_id = await initialize(http, workers.urls[0])
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 90, "method": "resources/subscribe", "params": {"uri": "mem://note"}}
    )
    answered = await http.post(workers.urls[1], content=body, headers=with_session(session_id))
    assert answered.status_code == 200 and b'"result"' in answered.content
    return session_id


async def test_a_new_standalone_get_does_not_deliver_again_what_the_one_it_took_over_delivered(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await subscribed_session(http, workers)
        async with get_stream(http, workers.urls[0], session_id) as older:
            posted = await http.post(
                workers.urls[1], content=call(2, "announce", {"n": 3}), headers=with_session(session_id)
            )
            assert posted.status_code == 200
            assert announced(await older.until(lambda m: len(announced(m)) == 3)) == [0, 1, 2]
            async with get_stream(http, workers.urls[2], session_id) as newer:
                await workers.servers[1].notify_resource_updated("mem://note")  # a marker after the takeover
                got = await newer.until(updated)
        assert announced(got) == []  # what the older stream delivered is not sent again


async def test_a_standalone_get_opened_after_another_closed_starts_after_what_that_one_delivered(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await subscribed_session(http, workers)
        for n in (2, 3):  # the second round sees only its own messages
            async with get_stream(http, workers.urls[n % 3], session_id) as stream:
                posted = await http.post(
                    workers.urls[1], content=call(n, "announce", {"n": n}), headers=with_session(session_id)
                )
                assert posted.status_code == 200
                got = await stream.until(lambda m, n=n: len(announced(m)) >= n)
                await workers.servers[0].notify_resource_updated("mem://note")
                got = await stream.until(updated)
            assert announced(got) == list(range(n))


async def sse_post(http: httpx.AsyncClient, url: str, body: bytes, session_id: str) -> list[tuple[str, Any]]:
    """A POST answered as an SSE stream: its (event id, message or None for a priming event)."""
    events: list[tuple[str, Any]] = []
    async with http.stream("POST", url, content=body, headers=with_session(session_id)) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            events += [(e.id or "", json.loads(e.data) if e.data else None) for e in decoder.feed(chunk)]
    return events


async def test_resuming_a_stream_whose_response_is_stored_replays_it_and_ends_at_once(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await initialize(http, workers.urls[0])
        body = call(5, "slow", {"n": 2, "delay": 0.01}, progress=True)
        events = await sse_post(http, workers.urls[1], body, session_id)
        ids = [eid for eid, _ in events if eid]
        assert events[-1][1]["id"] == 5 and len(ids) >= 2
        with anyio.fail_after(5):  # one process closes it at once; a hang fails here
            async with get_stream(http, workers.urls[2], session_id, ids[-2]) as stream:
                replayed = [json.loads(e.data) async for e in _events(stream) if e.data]
        assert [m.get("id") for m in replayed] == [5]
        with anyio.fail_after(5):  # from the response itself: nothing is left, and the stream ends
            async with get_stream(http, workers.urls[0], session_id, ids[-1]) as stream:
                assert [e async for e in _events(stream) if e.data] == []


async def _events(reader: Reader) -> AsyncIterator[Any]:
    async for chunk in reader.chunks:
        for event in reader.decoder.feed(chunk):
            yield event


def commands(workers: Workers) -> dict[str, int]:
    """Redis's count of calls per command so far (INFO commandstats)."""
    stats = workers.redis.command("INFO", "commandstats")
    return {name.removeprefix("cmdstat_"): int(row["calls"]) for name, row in stats.items()}


async def commands_per_second(workers: Workers, seconds: float) -> float:
    """The commands Redis ran per second over `seconds`, not counting the workers' heartbeats (SET) and
    this measure's own INFO."""
    before = commands(workers)
    await anyio.sleep(seconds)
    after = commands(workers)
    spent = sum(n - before.get(name, 0) for name, n in after.items() if name not in ("set", "info"))
    return spent / seconds


async def test_idle_get_streams_cost_redis_nothing_while_their_wake_ups_reach_them(tmp_path: Path) -> None:
    streams = int(os.environ.get("MCPKIT_IDLE_STREAMS", "60"))  # 200 for the figure in the README
    limits = httpx.Limits(max_connections=None)
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=30, limits=limits) as http:
        sessions = [await initialize(http, workers.urls[i % 3]) for i in range(streams)]
        async with anyio.create_task_group() as tg:
            opened = anyio.Event()
            count = 0

            async def hold(i: int, session_id: str) -> None:
                nonlocal count
                async with get_stream(http, workers.urls[i % 3], session_id):
                    count += 1
                    if count == streams:
                        opened.set()
                    await anyio.sleep_forever()

            for i, session_id in enumerate(sessions):
                tg.start_soon(hold, i, session_id)
            with anyio.fail_after(20):
                await opened.wait()
            await commands_per_second(workers, 1.0)  # the streams' first reads settle
            rate = await commands_per_second(workers, 3.0)
            tg.cancel_scope.cancel()
        print(f"{streams} idle GET streams: {rate:.1f} Redis commands/s")
        assert rate < 2, f"{streams} idle GET streams: {rate:.1f} Redis commands/s"


async def test_a_get_stream_polls_while_its_worker_cannot_subscribe_and_still_gets_its_messages(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        session_id = await initialize(http, workers.urls[0])
        async with get_stream(http, workers.urls[0], session_id) as stream:
            workers.redis.command("ACL", "SETUSER", "default", "-subscribe")
            try:
                workers.redis.command("CLIENT", "KILL", "TYPE", "pubsub")
                posted = await http.post(
                    workers.urls[1], content=call(2, "announce", {"n": 2}), headers=with_session(session_id)
                )
                assert posted.status_code == 200
                assert announced(await stream.until(lambda m: len(announced(m)) == 2)) == [0, 1]
            finally:
                workers.redis.command("ACL", "SETUSER", "default", "+subscribe")


def list_changed(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("method") == "notifications/tools/list_changed" for m in messages)


async def test_a_list_changed_sent_while_a_session_has_no_get_open_arrives_on_its_next_one(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=10) as http:
        quiet, watching = await subscribed_session(http, workers), await initialize(http, workers.urls[0])
        async with get_stream(http, workers.urls[1], watching) as heard:
            workers.servers[2].add_tool(lambda: "x", name="added")
            await heard.until(list_changed)  # published to the cluster by now
        async with get_stream(http, workers.urls[0], quiet) as stream:
            await workers.servers[1].notify_resource_updated("mem://note")  # a marker after it
            got = await stream.until(updated)
        assert [m["method"] for m in got] == ["notifications/tools/list_changed", UPDATED]
        async with get_stream(http, workers.urls[1], quiet) as again:  # heard once, not again
            await workers.servers[0].notify_resource_updated("mem://note")
            assert [m["method"] for m in await again.until(updated)] == [UPDATED]
