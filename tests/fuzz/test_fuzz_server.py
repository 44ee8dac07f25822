"""Fuzzing the high-level Server through the in-memory stream pair (real JSON bytes, no process).

The server offers the tools, prompts and resources the spec's examples name, so unbroken examples
reach real handlers. Whatever arrives, every request with a usable id is answered, no handler's
failure leaks out as an internal error, and the next valid request is served.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import orjson
import pytest
from fuzz_messages import (
    HANDSHAKE_SEEDS,
    MODERN_SEEDS,
    SENTINEL,
    budget,
    examples_available,
    initialize,
    request,
    stateless_request,
    wire_bytes,
)
from fuzz_oracle import answered, check_replies, expected_ids, internal_errors, parsed
from fuzz_server import server
from hypothesis import given as given_
from hypothesis import strategies as st

from mcpkit.protocol.framing import Oversized
from mcpkit.runtime.stream import MemoryStream, memory_pair

pytestmark = pytest.mark.skipif(not examples_available(), reason="needs ../shared/spec beside the checkout")

BUDGET = budget(400)


async def read_until(stream: MemoryStream, done: Any, replies: list[Any]) -> None:
    """Read replies until `done(replies)` holds; a server that stops answering fails the test."""
    with anyio.fail_after(10):
        while not done(replies):
            data = await stream.receive()
            assert not isinstance(data, Oversized)  # only a line reader (stdio) yields Oversized
            replies.append(orjson.loads(data))


def settled(must: Counter[Any], sentinel: str) -> Any:
    """Done once the sentinel and every request in `must` (as often as it was sent) are answered."""
    goal = must + Counter({("str", sentinel): 1})

    def done(replies: list[Any]) -> bool:
        got = answered(replies)
        return all(got[rid] >= count for rid, count in goal.items())

    return done


async def exchange(batch: list[bytes], handshake: bool) -> list[Any]:
    """Send `batch`, then a sentinel request; the replies that came until everything was answered."""
    client, server_end = memory_pair()
    replies: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        if handshake:
            await client.send(orjson.dumps(initialize(SENTINEL + "init")))
            await read_until(client, settled(Counter(), SENTINEL + "init"), [])
            await client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for raw in batch:
            await client.send(raw)
        must, _ = expected_ids([parsed(raw) for raw in batch])
        await client.send(orjson.dumps(request(SENTINEL + "1", "ping")))
        await read_until(client, settled(must, SENTINEL + "1"), replies)
        await still_serves(client, replies)
        await client.aclose()
        tg.cancel_scope.cancel()
    return [r for r in replies if not str(r.get("id")).startswith(SENTINEL)]


async def still_serves(client: MemoryStream, replies: list[Any]) -> None:
    """A stateless tools/call after the storm gets its real answer (stragglers land in `replies`)."""
    call = stateless_request(
        SENTINEL + "2", "tools/call", {"name": "echo", "arguments": {"text": "still here"}}
    )
    await client.send(orjson.dumps(call))
    await read_until(client, settled(Counter(), SENTINEL + "2"), replies)
    [answer] = [r for r in replies if r.get("id") == SENTINEL + "2"]
    assert answer["result"]["content"] == [{"type": "text", "text": "still here"}], answer


def check(batch: list[tuple[Any, bytes]], handshake: bool) -> None:
    raws = [raw for _, raw in batch]
    replies = anyio.run(exchange, raws, handshake)
    messages = [parsed(raw) for raw in raws]
    check_replies(messages, replies)
    assert internal_errors(messages, replies) == []


@BUDGET
@given_(st.lists(wire_bytes(HANDSHAKE_SEEDS + MODERN_SEEDS), min_size=1, max_size=5))
def test_a_handshake_server_answers_mutated_traffic_and_serves_the_next_call(
    batch: list[tuple[Any, bytes]],
) -> None:
    check(batch, handshake=True)


@BUDGET
@given_(st.lists(wire_bytes(MODERN_SEEDS + HANDSHAKE_SEEDS), min_size=1, max_size=5))
def test_a_stateless_server_answers_mutated_traffic_and_serves_the_next_call(
    batch: list[tuple[Any, bytes]],
) -> None:
    check(batch, handshake=False)
