"""A raw client peer that answers the server's own requests badly: the server never replies to a
response, and the tool waiting on the answer fails at once with a clear error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest

from mcpkit import Context, Server
from mcpkit.runtime.stream import MemoryStream, Outgoing, memory_pair

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

JSON = dict[str, Any]


def sampling_server() -> Server:
    server = Server("asks", client_request_timeout=300.0)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return str((await ctx.sample("hi"))["content"])

    return server


class Hostile:
    """A client end speaking raw JSON-RPC; every message the server sends is kept in `seen`."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream
        self.seen: list[JSON] = []

    async def send(self, message: Any) -> None:
        await self.stream.send(Outgoing(orjson.dumps(message)))

    async def next(self) -> JSON:
        data = await self.stream.receive()
        assert isinstance(data, bytes)
        message: JSON = orjson.loads(data)
        self.seen.append(message)
        return message

    async def initialize(self) -> None:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "hostile", "version": "1"},
        }
        await self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params})
        assert "result" in await self.next()
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@asynccontextmanager
async def hostile_peer(server: Server) -> AsyncIterator[Hostile]:
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        peer = Hostile(client_end)
        await peer.initialize()
        yield peer
        await client_end.aclose()
        tg.cancel_scope.cancel()


BAD_ANSWERS: list[JSON] = [
    {"jsonrpc": "2.0", "result": "not an object"},
    {"jsonrpc": "2.0", "result": [1, 2]},
    {"jsonrpc": "2.0", "result": {"model": "m"}},  # an object, but no role or content
    {"jsonrpc": "2.0", "error": "boom"},
    {"jsonrpc": "2.0", "error": {"message": "no code"}},
    {"jsonrpc": "2.0", "error": {"code": "-1", "message": "a string code"}},
    {"jsonrpc": "2.0", "error": {"code": True, "message": "a boolean code"}},
    {"jsonrpc": "1.0", "result": {"role": "assistant", "content": {"type": "text", "text": "x"}}},
    {"jsonrpc": "2.0", "result": {}, "error": {"code": 1, "message": "both"}},
]


@pytest.mark.parametrize("answer", BAD_ANSWERS)
async def test_a_malformed_answer_to_sampling_is_never_replied_to_and_fails_the_tool_at_once(
    answer: JSON,
) -> None:
    async with hostile_peer(sampling_server()) as peer:
        await peer.send({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {"name": "ask"}})
        with anyio.fail_after(10):  # the server's own timeout is 300 s: a hang fails here
            asked = await peer.next()
            assert asked["method"] == "sampling/createMessage"
            await peer.send({**answer, "id": asked["id"]})
            reply = await peer.next()
            while "method" in reply:
                reply = await peer.next()
        assert reply["id"] == "call", f"the server answered the client's response: {reply}"
        result = reply["result"]
        assert result["isError"] is True
        assert "sampling/createMessage" in result["content"][0]["text"]
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        with anyio.fail_after(10):
            assert (await peer.next()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert not [m for m in peer.seen if m.get("id") == asked["id"] and "method" not in m]


async def test_a_malformed_response_to_no_request_of_ours_gets_no_reply() -> None:
    async with hostile_peer(sampling_server()) as peer:
        for answer in BAD_ANSWERS:
            await peer.send({**answer, "id": 777})
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        with anyio.fail_after(10):
            assert (await peer.next()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
