"""Streamable HTTP resumability (transports "Resumability and Redelivery"): stored events, Last-Event-ID."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from test_http_server import call, hosted, open_session, rpc

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.protocol.sse import SSEDecoder, SSEEvent
from mcpkit.transports.http_server import StreamableHTTPApp
from mcpkit.transports.http_server.event_store import EventsExpired, InMemoryEventStore

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def resumable_server(gate: anyio.Event) -> Server:
    server = Server("resume-test")

    @server.tool()
    async def slow(ctx: Context) -> str:
        await ctx.log("info", "before")
        await gate.wait()
        await ctx.log("info", "after")
        return "late"

    return server


class Events:
    """Reads one SSE response event by event, across calls."""

    def __init__(self, response: httpx.Response) -> None:
        self.chunks = response.aiter_bytes()
        self.decoder = SSEDecoder()
        self.pending: list[SSEEvent] = []

    async def next(self, count: int, *, priming: bool = False) -> list[SSEEvent]:
        """The next `count` events; priming (data-less) events are skipped unless `priming`."""
        with anyio.fail_after(5):
            while len(self.pending) < count:
                chunk = await anext(self.chunks)
                self.pending += [e for e in self.decoder.feed(chunk) if e.data or priming]
        got, self.pending = self.pending[:count], self.pending[count:]
        return got


def log_data(event: SSEEvent) -> Any:
    return json.loads(event.data)["params"]["data"]


async def wait_until(condition: Any) -> None:
    with anyio.fail_after(5):
        while not condition():
            await anyio.sleep(0.01)


async def test_a_dropped_get_stream_resumes_with_exactly_the_missed_events_then_goes_on_live(
    hosting: str,
) -> None:
    server = resumable_server(anyio.Event())
    app = StreamableHTTPApp(server)
    async with hosted(hosting, app, timeout=5) as (client, url):
        headers = await open_session(client, url)
        session = app.sessions[headers["mcp-session-id"]]
        get_headers = {**headers, "accept": "text/event-stream"}
        async with client.stream("GET", url, headers=get_headers) as response:
            await wait_until(lambda: session.standalone.attached)
            for n in (1, 2):
                await server.log("info", f"n{n}")
            seen = await Events(response).next(2)
        assert [log_data(e) for e in seen] == ["n1", "n2"]
        await wait_until(lambda: not session.standalone.attached)
        for n in (3, 4, 5):
            await server.log("info", f"n{n}")
        resume = {**get_headers, "last-event-id": seen[-1].id or ""}
        async with client.stream("GET", url, headers=resume) as response:
            assert response.status_code == 200
            reader = Events(response)
            missed = await reader.next(3)
            assert [log_data(e) for e in missed] == ["n3", "n4", "n5"]
            await server.log("info", "n6")
            (live,) = await reader.next(1)
            assert log_data(live) == "n6"
        ids = [e.id for e in [*seen, *missed, live]]
        assert len(set(ids)) == len(ids) and all(i and i.startswith("get-") for i in ids)


async def test_a_response_whose_post_stream_dropped_is_replayed_on_get_and_nowhere_else(hosting: str) -> None:
    gate = anyio.Event()
    app = StreamableHTTPApp(resumable_server(gate))
    async with hosted(hosting, app, timeout=5) as (client, url):
        headers = await open_session(client, url)
        session = app.sessions[headers["mcp-session-id"]]
        async with client.stream("POST", url, content=call(1, "slow"), headers=headers) as response:
            (before,) = await Events(response).next(1)
        assert log_data(before) == "before"
        await wait_until(lambda: not session.routes[1].attached)
        gate.set()
        await wait_until(lambda: 1 not in session.routes)  # answered, into the store only
        assert not session.backlog  # not sent to the standalone stream instead
        resume = {**headers, "accept": "text/event-stream", "last-event-id": before.id or ""}
        response = await client.get(url, headers=resume)
        assert response.status_code == 200
        replayed = [json.loads(e.data) for e in SSEDecoder().feed(response.content) if e.data]
        assert [m.get("method") for m in replayed] == ["notifications/message", None]
        assert replayed[0]["params"]["data"] == "after"
        assert replayed[1]["id"] == 1 and replayed[1]["result"]["content"][0]["text"] == "late"


async def test_resuming_a_post_stream_still_in_flight_replays_then_follows_it_to_the_response(
    hosting: str,
) -> None:
    gate = anyio.Event()
    app = StreamableHTTPApp(resumable_server(gate))
    async with hosted(hosting, app, timeout=5) as (client, url):
        headers = await open_session(client, url)
        session = app.sessions[headers["mcp-session-id"]]
        async with client.stream("POST", url, content=call(1, "slow"), headers=headers) as response:
            (first,) = await Events(response).next(1, priming=True)
        assert first.data == "" and first.id is not None  # the priming event names the POST's stream
        await wait_until(lambda: not session.routes[1].attached)
        resume = {**headers, "accept": "text/event-stream", "last-event-id": first.id}
        async with client.stream("GET", url, headers=resume) as response:
            reader = Events(response)
            (before,) = await reader.next(1)
            gate.set()
            after, answer = await reader.next(2)
        assert [log_data(before), log_data(after)] == ["before", "after"]
        assert json.loads(answer.data)["result"]["content"][0]["text"] == "late"


@requirement("http-resume-own-stream")
async def test_a_bogus_unknown_or_foreign_last_event_id_is_400_with_a_json_rpc_error(hosting: str) -> None:
    app = StreamableHTTPApp(resumable_server(anyio.Event()))
    async with hosted(hosting, app, timeout=5) as (client, url):
        headers = await open_session(client, url)
        other = await open_session(client, url)
        response = await client.post(url, content=rpc(1, "ping"), headers=other)
        foreign = SSEDecoder().feed(response.content)[-1].id or ""
        get_headers = {**headers, "accept": "text/event-stream"}
        # malformed; never issued; issued in another session; seq 1 was the p1 priming event, not "get"
        for bogus in ["garbage", "", "get-", "-1", "p1-1x", "get-99999", "p77-1", foreign, "get-1"]:
            response = await client.get(url, headers={**get_headers, "last-event-id": bogus})
            assert response.status_code == 400, bogus
            assert response.json()["error"]["message"].startswith("Bad Request"), bogus
            assert "Traceback" not in response.text


async def test_an_expired_last_event_id_is_refused_rather_than_replayed_with_a_gap(hosting: str) -> None:
    server = resumable_server(anyio.Event())
    app = StreamableHTTPApp(server, event_store=InMemoryEventStore(max_events=4))
    async with hosted(hosting, app, timeout=5) as (client, url):
        headers = await open_session(client, url)
        get_headers = {**headers, "accept": "text/event-stream"}
        async with client.stream("GET", url, headers=get_headers) as response:
            session = app.sessions[headers["mcp-session-id"]]
            await wait_until(lambda: session.standalone.attached)
            await server.log("info", "first")
            (first,) = await Events(response).next(1)
        for n in range(10):
            await server.log("info", n)
        response = await client.get(url, headers={**get_headers, "last-event-id": first.id or ""})
        assert response.status_code == 400 and "no longer retained" in response.json()["error"]["message"]


async def test_the_in_memory_store_keeps_at_most_its_caps_dropping_the_oldest() -> None:
    store = InMemoryEventStore(max_events=5, max_bytes=1000)
    ids = [await store.store("s", "get", b"x" * 10) for _ in range(50)]
    assert store.event_count == 5 and store.byte_count == 50
    replay = await store.replay_after("s", ids[-3])
    assert [i for i, _ in replay.events] == ids[-2:] and replay.stream_id == "get"
    for _ in range(50):
        await store.store("s", "p1", b"y" * 400)
    assert store.byte_count <= 1000 and store.event_count == 2
    await store.forget("s")
    assert (store.session_count, store.event_count, store.byte_count) == (0, 0, 0)


@requirement("http-resume-own-stream")
async def test_a_replay_never_carries_another_streams_events() -> None:
    store = InMemoryEventStore()
    a1 = await store.store("s", "p1", b"a1")
    await store.store("s", "p2", b"b1")
    await store.store("s", "get", b"g1")
    await store.store("s", "p1", b"a2")
    replay = await store.replay_after("s", a1)
    assert replay.stream_id == "p1" and [data for _, data in replay.events] == [b"a2"]


async def test_the_in_memory_store_is_bounded_in_total_dropping_the_oldest_events_of_any_session() -> None:
    store = InMemoryEventStore(max_bytes=64 * 1024, max_total_bytes=1024 * 1024, max_total_events=5000)
    first_ids = []
    for n in range(200):  # 200 idle sessions, each within its own cap: 6 MB in all
        ids = [await store.store(f"s{n}", "get", b"x" * 1000) for _ in range(30)]
        first_ids.append(ids[0])
        assert store.byte_count <= 1024 * 1024
    assert store.event_count == 1048 and store.session_count == 200
    with pytest.raises(EventsExpired):  # the oldest session lost its events first
        await store.replay_after("s0", first_ids[0])
    replay = await store.replay_after("s199", first_ids[199])
    assert len(replay.events) == 29  # the newest session keeps everything
    for n in range(100):
        await store.forget(f"s{n}")
    assert store.byte_count == store.event_count * 1000 and store.order_length <= 2 * store.event_count + 64


async def test_the_in_memory_store_caps_empty_priming_events_in_total_too() -> None:
    store = InMemoryEventStore(max_total_events=300)
    for n in range(1000):
        await store.store(f"s{n}", "p1", b"")
    assert store.event_count == 300 and store.byte_count == 0 and store.order_length <= 2 * 300 + 64


async def test_by_default_idle_sessions_pin_at_most_64_mib_of_events_in_all() -> None:
    store, megabyte = InMemoryEventStore(), b"x" * 1024 * 1024
    for n in range(40):  # 40 sessions of 4 MiB each would pin 160 MiB without the total cap
        for _ in range(4):
            await store.store(f"s{n}", "get", megabyte)
    assert store.byte_count <= 64 * 1024 * 1024 and store.event_count <= 64
