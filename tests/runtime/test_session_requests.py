"""The requests a Session sends and waits on (runtime/requesting.py), against a peer written by hand on the
other end of an in-memory pair: each answer reaches its own caller, a deadline that progress resets under
a hard cap, notifications/cancelled on timeout and on the caller's cancellation, and every pending request
failed when the peer goes away."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.errors import CONNECTION_CLOSED, REQUEST_TIMEOUT, MCPError, RemoteError, RequestCancelled
from mcpkit.runtime.session import Session
from mcpkit.runtime.stream import MemoryStream, memory_pair
from messages import VERSION

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]


class Peer:
    """The server end, by hand: what the Session sent, and answers as each test says."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream

    async def read(self) -> JSON:
        """The next message but notifications/initialized."""
        while True:
            data = await self.stream.receive()
            assert isinstance(data, bytes)
            message: JSON = json.loads(data)
            if message.get("method") != "notifications/initialized":
                return message

    async def send(self, message: JSON) -> None:
        await self.stream.send(json.dumps(message).encode())

    async def answer(self, request: JSON, result: JSON) -> None:
        await self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def progress(self, request: JSON, progress: float) -> None:
        token = request["params"]["_meta"]["progressToken"]
        params = {"progressToken": token, "progress": progress}
        await self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})


async def no_requests(session: Session, event: ev.RequestReceived) -> JSON:
    raise MCPError(-32601, "this client answers nothing")


@asynccontextmanager
async def talking() -> AsyncIterator[tuple[Session, Peer]]:
    """An initialized client Session, and the peer it talks to."""
    mine, theirs = memory_pair()
    connection = Connection(Role.CLIENT, info={"name": "t", "version": "1"}, capabilities={})
    session, peer = Session(connection, mine, no_requests), Peer(theirs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)

        async def handshake() -> None:
            request = await peer.read()
            result = {
                "protocolVersion": VERSION,
                "capabilities": {"tools": {}, "prompts": {}},
                "serverInfo": {"name": "s", "version": "1"},
            }
            await peer.answer(request, result)

        with anyio.fail_after(5):
            tg.start_soon(handshake)
            await session.initialize(VERSION, timeout=5)
        yield session, peer
        tg.cancel_scope.cancel()


async def test_each_answer_reaches_the_request_with_its_id_whatever_the_order() -> None:
    results: dict[str, JSON] = {}
    async with talking() as (session, peer), anyio.create_task_group() as tg:

        async def ask(method: str) -> None:
            results[method] = await session.request(method, timeout=5)

        tg.start_soon(ask, "tools/list")
        first = await peer.read()
        tg.start_soon(ask, "prompts/list")
        second = await peer.read()
        await peer.answer(second, {"prompts": []})
        await peer.answer(first, {"tools": []})
    assert results == {"tools/list": {"tools": []}, "prompts/list": {"prompts": []}}


async def test_an_error_answer_is_raised_and_on_id_learned_the_id_on_the_wire() -> None:
    ids: list[Any] = []
    async with talking() as (session, peer), anyio.create_task_group() as tg:

        async def refuse() -> None:
            request = await peer.read()
            assert ids == [request["id"]]
            error = {"code": -32602, "message": "no such tool"}
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

        tg.start_soon(refuse)
        with pytest.raises(RemoteError) as refused:
            await session.request("tools/call", {"name": "x"}, timeout=5, on_id=ids.append)
    assert refused.value.code == -32602


async def test_past_its_timeout_a_request_raises_and_the_peer_is_told_and_a_late_answer_is_dropped() -> None:
    async with talking() as (session, peer):
        with pytest.raises(RequestCancelled) as timed_out:
            await session.request("tools/list", timeout=0.05)
        assert timed_out.value.code == REQUEST_TIMEOUT
        request = await peer.read()
        cancelled = await peer.read()
        assert cancelled["method"] == "notifications/cancelled"
        assert cancelled["params"] == {"requestId": request["id"], "reason": "timed out"}
        await peer.answer(request, {"tools": []})  # too late: nobody waits for it

        async def answer_next() -> None:
            await peer.answer(await peer.read(), {"prompts": []})

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_next)
            assert await session.request("prompts/list", timeout=5) == {"prompts": []}


async def test_progress_keeps_a_request_alive_past_its_timeout() -> None:
    heard: list[float] = []
    async with talking() as (session, peer), anyio.create_task_group() as tg:

        async def slow_with_progress() -> None:
            request = await peer.read()
            for step in range(8):  # 8 x 0.25 s: twice the timeout in all
                await anyio.sleep(0.25)
                await peer.progress(request, step)
            await peer.answer(request, {"tools": []})

        tg.start_soon(slow_with_progress)
        result = await session.request("tools/list", timeout=1.0, on_progress=lambda p, *_: heard.append(p))
    assert result == {"tools": []} and heard == list(range(8))


async def test_progress_never_keeps_a_request_past_its_hard_cap() -> None:
    async with talking() as (session, peer), anyio.create_task_group() as tg:

        async def progress_forever() -> None:
            request = await peer.read()
            step = 0
            while True:
                await peer.progress(request, step)
                step += 1
                await anyio.sleep(0.01)

        tg.start_soon(progress_forever)
        with pytest.raises(RequestCancelled):
            await session.request("tools/list", timeout=10, max_timeout=0.3, on_progress=lambda *_: None)
        tg.cancel_scope.cancel()


async def test_a_caller_that_is_cancelled_tells_the_peer() -> None:
    async with talking() as (session, peer), anyio.create_task_group() as tg:
        tg.start_soon(session.request, "tools/list")
        request = await peer.read()
        tg.cancel_scope.cancel()
    cancelled = await peer.read()
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"] == {"requestId": request["id"], "reason": "cancelled by the caller"}


async def test_when_the_peer_goes_away_every_pending_request_fails_and_later_ones_at_once() -> None:
    failed: list[int] = []
    async with talking() as (session, peer):
        async with anyio.create_task_group() as tg:

            async def ask(method: str) -> None:
                with pytest.raises(MCPError) as closed:
                    await session.request(method, timeout=30)
                failed.append(closed.value.code)

            tg.start_soon(ask, "tools/list")
            tg.start_soon(ask, "prompts/list")
            await peer.read()
            await peer.read()
            await peer.stream.aclose()
        with pytest.raises(MCPError) as after:
            await session.request("tools/list", timeout=30)
    assert failed == [CONNECTION_CLOSED, CONNECTION_CLOSED] and after.value.code == CONNECTION_CLOSED
