"""Fuzzing the sans-I/O core: mutated spec examples into a server Connection, in both eras.

Whatever comes in, `receive_data` raises nothing, every request with a usable id is answered exactly
once (by the core itself, or by the application once the core hands it over), every error carries a
spec code, and the next valid request is still served.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from fuzz_messages import (
    HANDSHAKE_SEEDS,
    MODERN_SEEDS,
    budget,
    examples_available,
    initialize,
    mutated,
    request,
    stateless_request,
    wire_bytes,
)
from fuzz_oracle import check_replies, parsed
from hypothesis import given as given_
from hypothesis import strategies as st

from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.errors import RemoteError

pytestmark = pytest.mark.skipif(not examples_available(), reason="needs ../shared/spec beside the checkout")

CAPS = {"tools": {"listChanged": True}, "resources": {"subscribe": True}, "prompts": {}, "logging": {}}
BUDGET = budget(1000)


def server(handshake: bool) -> Connection:
    conn = Connection(Role.SERVER, info={"name": "fuzz", "version": "1"}, capabilities=CAPS)
    if handshake:
        drive(conn, orjson.dumps(initialize(0)))
        drive(conn, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return conn


def drive(conn: Connection, raw: bytes) -> list[dict[str, Any]]:
    """Feed one message; answer what the core hands to the application, as a server would."""
    replies: list[dict[str, Any]] = []
    for event in conn.receive_data(raw):
        if isinstance(event, ev.SendMessage):
            replies.append(event.message)
        elif isinstance(event, ev.RequestReceived):
            answer = (
                conn.respond(event.id, {})
                if event.method != "tools/call"
                else conn.respond_error(event.id, RemoteError(-32602, "Unknown tool"))
            )
            assert answer is not None
            replies.append(answer)
    for reply in replies:
        orjson.dumps(reply)  # everything the core answers can be written back
    return replies


def still_serves(conn: Connection, handshake: bool) -> None:
    if handshake:
        [pong] = drive(conn, orjson.dumps(request("after", "ping")))
        assert pong == {"jsonrpc": "2.0", "id": "after", "result": {}}
    [listed] = drive(conn, orjson.dumps(stateless_request("after-2", "tools/list")))
    assert listed["id"] == "after-2" and listed["result"]["resultType"] == "complete"


def run(conn: Connection, batch: list[tuple[Any, bytes]], handshake: bool) -> None:
    messages, replies = [], []
    for _, raw in batch:
        messages.append(parsed(raw))
        replies.extend(drive(conn, raw))
    check_replies(messages, replies)
    still_serves(conn, handshake)


@BUDGET
@given_(st.lists(wire_bytes(HANDSHAKE_SEEDS + MODERN_SEEDS), min_size=1, max_size=4))
def test_a_handshake_session_survives_mutated_messages_and_serves_the_next_request(
    batch: list[tuple[Any, bytes]],
) -> None:
    run(server(handshake=True), batch, handshake=True)


@BUDGET
@given_(st.lists(wire_bytes(MODERN_SEEDS + HANDSHAKE_SEEDS), min_size=1, max_size=4))
def test_a_stateless_server_survives_mutated_messages_and_serves_the_next_request(
    batch: list[tuple[Any, bytes]],
) -> None:
    run(server(handshake=False), batch, handshake=False)


@BUDGET
@given_(st.lists(mutated(MODERN_SEEDS + HANDSHAKE_SEEDS), min_size=1, max_size=4))
def test_mutated_values_handed_to_receive_never_raise(batch: list[Any]) -> None:
    """`receive` takes already-decoded values, even ones no JSON text decodes to (2**1000, NaN)."""
    conn = server(handshake=True)
    for value in batch:
        for event in conn.receive(value):
            if isinstance(event, ev.RequestReceived):
                assert conn.respond(event.id, {}) is not None
    still_serves(conn, handshake=True)
