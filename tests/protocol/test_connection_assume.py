"""A server Connection that assumes a version instead of a handshake nobody sent (a sessionless HTTP POST)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.errors import LocalError
from mcpkit.protocol.lifecycle import Phase
from mcpkit.protocol.versions import HANDSHAKE_VERSIONS

SERVER_CAPS: dict[str, Any] = {"tools": {}, "logging": {}}


def server() -> Connection:
    return Connection(Role.SERVER, info={"name": "s", "version": "1"}, capabilities=SERVER_CAPS)


def request(method: str) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}})


def test_an_assumed_version_serves_handshake_era_requests_without_initialize() -> None:
    conn = server()
    conn.assume("2025-06-18")
    assert conn.phase is Phase.READY
    assert conn.negotiated is not None and conn.negotiated.version == "2025-06-18"
    assert conn.negotiated.client_capabilities == {} and conn.negotiated.client_info == {}
    events = conn.receive_data(request("tools/list"))
    (received,) = events
    assert isinstance(received, ev.RequestReceived)
    assert received.negotiated is conn.negotiated  # the assumed agreement, not a stateless one


def test_a_version_the_server_does_not_speak_is_negotiated_as_initialize_would_be() -> None:
    conn = server()
    conn.assume("1999-01-01")
    assert conn.negotiated is not None and conn.negotiated.version == HANDSHAKE_VERSIONS[-1]


def test_only_a_new_server_connection_assumes_a_version() -> None:
    client = Connection(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities={})
    with pytest.raises(LocalError):
        client.assume("2025-06-18")
    conn = server()
    conn.assume("2025-06-18")
    with pytest.raises(LocalError):
        conn.assume("2025-03-26")


def test_after_assuming_a_version_an_initialize_is_refused() -> None:
    conn = server()
    conn.assume("2025-06-18")
    (reply,) = conn.receive_data(request("initialize"))
    assert isinstance(reply, ev.SendMessage) and reply.message["error"]["code"] == -32600
