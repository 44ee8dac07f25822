"""The lifecycle table, every (role, phase, move) of it, and what the Connection façade derives from it.

As in h2's state-machine tests: the expected transitions are written out here from the spec's
lifecycle page, independently of `lifecycle.TRANSITIONS`, and every other combination must fail
with an error that names the role, the phase and the move.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conftest import requirement
from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import METHODS, Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.errors import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    LocalError,
    MCPError,
    RemoteError,
    to_wire_error,
)
from mcpkit.protocol.lifecycle import Negotiated, Phase, Trigger, advance
from mcpkit.protocol.versions import HANDSHAKE_VERSIONS, LATEST_MODERN, SUPPORTED_VERSIONS

C, S = Role.CLIENT, Role.SERVER
T = Trigger
EARLY = (T.SEND_EARLY, T.RECEIVE_EARLY)
# lifecycle "Initialization", written out: the client opens (with initialize, or by adopting a 2026-07-28
# agreement after probing), the server accepts one initialize, and ordinary traffic needs both ready.
EXPECTED: dict[tuple[Role, Phase, Trigger], Phase] = {
    (C, Phase.NEW, T.SEND_INITIALIZE): Phase.INITIALIZING,
    (C, Phase.NEW, T.SEND_PROBE): Phase.NEW,
    (C, Phase.NEW, T.ADOPT_STATELESS): Phase.READY,
    (C, Phase.INITIALIZING, T.INITIALIZE_RESULT): Phase.READY,
    (C, Phase.INITIALIZING, T.INITIALIZE_FAILED): Phase.NEW,
    (C, Phase.INITIALIZING, T.ABANDON_INITIALIZE): Phase.NEW,
    (S, Phase.NEW, T.RECEIVE_INITIALIZE): Phase.READY,
    (S, Phase.NEW, T.ASSUME_VERSION): Phase.READY,  # a sessionless HTTP POST, with no handshake
}
for _role in Role:
    for _trigger in (T.SEND_REQUEST, T.SEND_NOTIFICATION, T.RECEIVE_REQUEST):
        EXPECTED[(_role, Phase.READY, _trigger)] = Phase.READY
    for _phase, _trigger in itertools.product(Phase, EARLY):
        EXPECTED[(_role, _phase, _trigger)] = _phase  # ping, logs, cancel and progress never move it
PEER_MOVES = {T.RECEIVE_INITIALIZE, T.INITIALIZE_RESULT, T.INITIALIZE_FAILED, T.RECEIVE_REQUEST, *EARLY[1:]}
SERVER_CAPS: dict[str, Any] = {"tools": {}, "logging": {}, "resources": {}}
META = {
    "io.modelcontextprotocol/protocolVersion": LATEST_MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
}


@pytest.mark.parametrize(("role", "phase", "trigger"), list(itertools.product(Role, Phase, Trigger)))
def test_every_move_in_every_phase_follows_the_table_or_fails_naming_role_phase_and_move(
    role: Role, phase: Phase, trigger: Trigger
) -> None:
    expected = EXPECTED.get((role, phase, trigger))
    if expected is not None:
        assert advance(role, phase, trigger, "some/method") is expected
        return
    fault = RemoteError if trigger in PEER_MOVES else LocalError
    with pytest.raises(MCPError) as caught:
        advance(role, phase, trigger, "some/method")
    error = caught.value
    assert type(error) is fault
    assert all(part in error.message for part in (role.value, phase.value, trigger.value, "'some/method'"))
    if fault is RemoteError:
        assert error.code == -32600 and error.message.startswith("Invalid Request: ")


def test_the_peer_is_at_fault_exactly_for_the_moves_its_messages_make() -> None:
    assert {t for t in Trigger if t.remote} == PEER_MOVES


@requirement("lifecycle-no-requests-before-init")
def test_every_request_the_lifecycle_lets_in_before_initialization_is_answered_by_the_core() -> None:
    early = {m for m, r in METHODS.items() if r.before_ready and r.handshake and not r.notification}
    assert early == set(Connection.CORE_REQUESTS) - {"logging/setLevel"}


def server(versions: tuple[str, ...] = SUPPORTED_VERSIONS) -> Connection:
    info = {"name": "s", "version": "1"}
    return Connection(Role.SERVER, info=info, capabilities=SERVER_CAPS, versions=versions)


def client(capabilities: dict[str, Any] | None = None) -> Connection:
    return Connection(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities=capabilities or {})


def handshake(c: Connection, s: Connection) -> None:
    _, init = c.initialize()
    [reply, _ready] = s.receive(init)
    assert isinstance(reply, ev.SendMessage)
    [_, initialized, _] = c.receive(reply.message)
    assert isinstance(initialized, ev.SendMessage)
    s.receive(initialized.message)


def test_a_request_before_initialize_is_refused_with_the_phase_it_came_in() -> None:
    [reply] = server(HANDSHAKE_VERSIONS).receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert isinstance(reply, ev.SendMessage)
    error = reply.message["error"]
    assert error["code"] == -32600
    assert "'tools/list'" in error["message"] and "not initialized" in error["message"]


def test_a_notification_before_initialize_is_refused_locally() -> None:
    early = client({"roots": {"listChanged": True}})
    with pytest.raises(LocalError, match="not initialized"):
        early.send_notification("notifications/roots/list_changed")


def test_initialize_is_sent_once_and_only_by_the_client() -> None:
    c = client()
    c.initialize()
    with pytest.raises(LocalError, match="'initialize'"):
        c.initialize()
    with pytest.raises(LocalError, match="server cannot send initialize"):
        server().initialize()


def test_a_client_that_stopped_waiting_for_initialize_may_initialize_again() -> None:
    c, s = client(), server()
    first, _ = c.initialize()
    assert c.cancel(first) is None  # lifecycle: initialize is never cancelled on the wire
    assert c.phase is Phase.NEW
    late: dict[str, Any] = {"jsonrpc": "2.0", "id": first, "result": {}}
    assert c.receive(late) == []
    handshake(c, s)
    assert c.phase is s.phase is Phase.READY


def test_adopting_a_stateless_agreement_makes_the_client_ready_once() -> None:
    c = client()
    agreed = Negotiated(LATEST_MODERN, c.info, {}, {"name": "s"}, SERVER_CAPS)
    assert c.adopt_modern(agreed) == [ev.Ready(agreed)]
    assert c.negotiated is agreed and c.negotiated.stateless
    with pytest.raises(LocalError, match="adopt"):
        c.adopt_modern(agreed)
    with pytest.raises(LocalError, match="2026-07-28"):
        client().adopt_modern(Negotiated("2025-11-25", {}, {}, {}, {}))


def test_every_request_received_carries_the_agreement_it_is_served_under() -> None:
    c, s = client({"roots": {}}), server()
    handshake(c, s)
    [legacy] = s.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert isinstance(legacy, ev.RequestReceived) and legacy.negotiated is s.negotiated
    assert not legacy.negotiated.stateless
    _, ask = s.send_request("roots/list")
    [asked] = c.receive(ask)
    assert isinstance(asked, ev.RequestReceived) and asked.negotiated is c.negotiated
    modern = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}}
    [stateless] = server().receive(modern)
    assert isinstance(stateless, ev.RequestReceived) and stateless.negotiated.stateless
    assert stateless.negotiated.client_capabilities == {"roots": {}}


def test_a_request_that_wants_progress_gets_a_fresh_token_and_its_progress_is_reported() -> None:
    c, s = client(), server()
    handshake(c, s)
    rid, message = c.send_request("tools/call", {"name": "x"}, progress=True)
    token = message["params"]["_meta"]["progressToken"]
    other, second = c.send_request("tools/call", {"name": "y"}, progress=True)
    assert second["params"]["_meta"]["progressToken"] != token
    [request] = s.receive(message)
    assert isinstance(request, ev.RequestReceived)
    note = s.progress(rid, 1, 2)
    assert note is not None and note["params"]["progressToken"] == token
    assert c.receive(note) == [ev.ProgressReceived(rid, 1, 2, None)]
    assert other != rid


def test_a_callers_own_progress_token_is_kept() -> None:
    c, s = client(), server()
    handshake(c, s)
    params = {"name": "x", "_meta": {"progressToken": "mine"}}
    _, message = c.send_request("tools/call", params, progress=True)
    assert message["params"]["_meta"] == {"progressToken": "mine"}


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_resource_not_found_is_sent_in_the_code_each_version_has(version: str) -> None:
    error = to_wire_error(MCPError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": "x"}), version)
    assert error["code"] == (INVALID_PARAMS if version == LATEST_MODERN else RESOURCE_NOT_FOUND)
    assert error["data"] == {"uri": "x"}


def test_a_stateless_request_failing_with_resource_not_found_is_answered_with_invalid_params() -> None:
    s = server()
    read = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "x", "_meta": META}}
    s.receive(read)
    reply = s.respond_error(7, MCPError(RESOURCE_NOT_FOUND, "Resource not found"))
    assert reply is not None and reply["error"]["code"] == INVALID_PARAMS
