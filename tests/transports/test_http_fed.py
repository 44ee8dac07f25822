"""A POSTed request reaches its handler in the POST's own task: the session's one inbound entry
(`Session.deliver`, which `SessionStream.push` calls) starts it at once, with no reader to wake, and on
Python 3.12+ the handler's first step runs at once too (eager start), so a handler that never suspends has
answered before the POST's task waits at all. Order holds: what a POST hands over is acted on before the
push returns. A POST that comes before the Session runs waits for it. A response already sent when the
POST starts waiting is written without a disconnect watcher."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import MutableMapping
from typing import Any

import orjson
import pytest

from mcpkit import Server
from mcpkit.protocol.http_rules import HTTPRefusal
from mcpkit.transports.http_server.exchange import Exchange
from mcpkit.transports.http_server.sessions import Item, SessionStream
from mcpkit.transports.http_server.streams import reply_json, write_sse

pytestmark = pytest.mark.anyio

VERSION = "2025-06-18"
EAGER = sys.version_info >= (3, 12)
CLIENT = {"name": "test", "version": "0"}


def _message(**fields: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", **fields})


class Recorder:
    """A server whose tool and notification handler note when they ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.server = Server("fed", "1.0")

        @self.server.tool()
        async def probe(tag: str) -> str:
            self.ran.append(tag)
            return tag

        @self.server.on_roots_changed
        async def roots_changed(_session: Any) -> None:
            self.ran.append("roots changed")


async def _serving(recorder: Recorder) -> tuple[SessionStream, asyncio.Task[None]]:
    stream = SessionStream("s1")
    task = asyncio.get_running_loop().create_task(recorder.server.serve(stream))
    hello = {
        "protocolVersion": VERSION,
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": CLIENT,
    }
    route = stream.open_route(0, stored=False, prime_retry_ms=None)
    answer = route.attach()
    await stream.push(_message(id=0, method="initialize", params=hello))
    assert b'"result"' in (await asyncio.wait_for(answer.get(), 5)).data
    await stream.push(_message(method="notifications/initialized"))
    return stream, task


async def _stop(stream: SessionStream, task: asyncio.Task[None]) -> None:
    stream.close()
    await asyncio.wait_for(task, 5)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # eager start and handlers as bare tasks are asyncio's


async def test_a_pushed_request_starts_in_the_posts_task_without_a_turn_of_the_loop() -> None:
    recorder = Recorder()
    stream, task = await _serving(recorder)
    warm = {"name": "probe", "arguments": {"tag": "warm"}}  # the first call's one-off setup may suspend
    await stream.push(_message(id=1, method="tools/call", params=warm))
    while recorder.ran != ["warm"]:
        await asyncio.sleep(0)
    call = {"name": "probe", "arguments": {"tag": "second"}}
    await stream.push(_message(id=2, method="tools/call", params=call))
    if not EAGER:
        assert recorder.ran == ["warm"]  # a task now, run on the loop's next turn
        await asyncio.sleep(0)  # one turn: through a reader task it would only be starting now
    assert recorder.ran == ["warm", "second"]
    await _stop(stream, task)


async def test_what_one_post_hands_over_is_acted_on_before_what_a_later_post_does() -> None:
    recorder = Recorder()
    stream, task = await _serving(recorder)
    await stream.push(_message(method="notifications/roots/list_changed"))
    call = {"name": "probe", "arguments": {"tag": "after"}}
    await stream.push(_message(id=2, method="tools/call", params=call))
    for _ in range(20):
        if len(recorder.ran) == 2:
            break
        await asyncio.sleep(0)
    assert recorder.ran == ["roots changed", "after"]
    await _stop(stream, task)


async def test_a_pushed_request_on_an_ended_session_is_refused_not_started() -> None:
    recorder = Recorder()
    stream, task = await _serving(recorder)
    await _stop(stream, task)
    with pytest.raises(HTTPRefusal) as refused:
        await stream.push(_message(id=3, method="tools/call", params={"name": "probe"}))
    assert refused.value.status == 404
    assert recorder.ran == []


async def test_a_post_before_the_session_runs_waits_for_it_and_is_then_served() -> None:
    recorder = Recorder()
    stream = SessionStream("s0")
    route = stream.open_route(0, stored=False, prime_retry_ms=None)
    answer = route.attach()
    hello = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": CLIENT}
    early = asyncio.get_running_loop().create_task(
        stream.push(_message(id=0, method="initialize", params=hello))
    )
    await asyncio.sleep(0.01)
    assert not early.done()  # nothing runs the session yet: the POST waits
    task = asyncio.get_running_loop().create_task(recorder.server.serve(stream))
    await asyncio.wait_for(early, 5)
    assert b'"result"' in (await asyncio.wait_for(answer.get(), 5)).data
    await _stop(stream, task)


class Capture:
    def __init__(self) -> None:
        self.sent: list[MutableMapping[str, Any]] = []
        self.receives = 0

    async def receive(self) -> dict[str, Any]:
        self.receives += 1
        await asyncio.Event().wait()  # a client that never leaves
        raise AssertionError("unreachable")

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)


async def test_a_json_answer_already_sent_is_written_without_watching_for_disconnect() -> None:
    session = SessionStream("s2")
    route = session.open_route(7, stored=False, prime_retry_ms=None)
    receiver = route.attach()
    await route.offer(Item(None, b'{"jsonrpc":"2.0","id":7,"result":{}}', True))
    capture = Capture()
    exchange = Exchange({}, capture.receive, capture.send)
    tasks = len(asyncio.all_tasks())
    await reply_json(session, receiver, 7, exchange)
    assert len(asyncio.all_tasks()) == tasks  # no watcher task was started (and cancelled) for it
    assert capture.receives == 0
    assert capture.sent[0]["status"] == 200
    assert capture.sent[1]["body"] == b'{"jsonrpc":"2.0","id":7,"result":{}}'


async def test_an_sse_stream_already_complete_is_one_body_write() -> None:
    session = SessionStream("s3")
    route = session.open_route(8, stored=True, prime_retry_ms=None)
    receiver = route.attach()
    await route.offer(Item("p1:1", b'{"jsonrpc":"2.0","method":"notifications/progress"}', False))
    await route.offer(Item("p1:2", b'{"jsonrpc":"2.0","id":8,"result":{}}', True))
    capture = Capture()
    exchange = Exchange({}, capture.receive, capture.send)
    tasks = len(asyncio.all_tasks())
    assert await write_sse(route, receiver, exchange)
    assert len(asyncio.all_tasks()) == tasks  # no watcher task
    assert capture.receives == 0
    start, body = capture.sent
    assert start["status"] == 200 and body["more_body"] is False
    assert body["body"].count(b"data: ") == 2
    assert b"id: p1:2" in body["body"]
