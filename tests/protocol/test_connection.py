"""The sans-I/O core, tested by wiring two Connections together: no loop, no sockets, no sleeps."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.errors import CapabilityError, LocalError
from mcpkit.protocol.versions import HANDSHAKE_VERSIONS, Feature, has, negotiate

requirement = pytest.mark.requirement

SERVER_CAPS = {"tools": {"listChanged": True}, "logging": {}, "resources": {"subscribe": True}}


def wire(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message)


def sent(events: list[ev.Event]) -> list[dict[str, Any]]:
    return [e.message for e in events if isinstance(e, ev.SendMessage)]


def pair(
    client_caps: dict[str, Any] | None = None,
    server_caps: dict[str, Any] | None = None,
    version: str = "2025-11-25",
) -> tuple[Connection, Connection]:
    client = Connection(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities=client_caps or {})
    server = Connection(
        Role.SERVER,
        info={"name": "s", "version": "1"},
        capabilities=SERVER_CAPS if server_caps is None else server_caps,
    )
    _, init = client.initialize(version)
    reply = sent(server.receive_data(wire(init)))
    [initialized] = sent(client.receive_data(wire(reply[0])))
    server.receive_data(wire(initialized))
    return client, server


def error_code(events: list[ev.Event]) -> int:
    [message] = sent(events)
    return int(message["error"]["code"])


@requirement("lifecycle-init-first")
def test_initialize_negotiates_the_requested_version_and_both_sides_become_ready() -> None:
    client, server = pair()
    assert client.negotiated is not None and server.negotiated is not None
    assert client.negotiated.version == server.negotiated.version == "2025-11-25"
    assert client.negotiated.server_capabilities == SERVER_CAPS


@requirement("lifecycle-version-same")
@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_server_answers_with_the_clients_version_when_it_supports_it(version: str) -> None:
    _client, server = pair(version=version)
    assert server.negotiated is not None and server.negotiated.version == version


@requirement("lifecycle-version-latest")
def test_server_answers_an_unknown_version_with_its_latest() -> None:
    assert negotiate("1999-01-01") == HANDSHAKE_VERSIONS[-1]
    server = Connection(Role.SERVER, info={"name": "s", "version": "1"}, capabilities={})
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "1999-01-01",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    [reply] = sent(server.receive(init))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


@requirement("lifecycle-client-disconnect-unsupported")
def test_client_refuses_a_version_it_does_not_speak() -> None:
    client = Connection(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities={})
    rid, _ = client.initialize()
    result = {
        "protocolVersion": "2099-01-01",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    [event] = client.receive({"jsonrpc": "2.0", "id": rid, "result": result})
    assert isinstance(event, ev.ErrorReceived)
    assert "2099-01-01" in event.error.message and "does not support" in event.error.message
    assert client.negotiated is None


@requirement("lifecycle-no-requests-before-init")
def test_a_request_before_initialize_is_an_error_but_ping_is_answered() -> None:
    server = Connection(
        Role.SERVER,
        info={"name": "s", "version": "1"},
        capabilities=SERVER_CAPS,
        versions=HANDSHAKE_VERSIONS,
    )
    assert error_code(server.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})) == -32600
    [pong] = sent(server.receive({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_a_dual_era_server_reads_a_bare_request_before_initialize_as_a_malformed_stateless_one() -> None:
    # 2026-07-28 basic "_meta": a request missing the required fields is -32602; ping stays legacy.
    server = Connection(Role.SERVER, info={"name": "s", "version": "1"}, capabilities=SERVER_CAPS)
    [reply] = sent(server.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert reply["error"]["code"] == -32602 and "initialize" in reply["error"]["message"]
    [pong] = sent(server.receive({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_a_second_initialize_is_rejected() -> None:
    _client, server = pair()
    init = {
        "jsonrpc": "2.0",
        "id": 99,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    assert error_code(server.receive(init)) == -32600


@requirement("basic-id-echo")
@pytest.mark.parametrize("rid", ["abc", 7, 0, -3, "0"])
def test_responses_echo_the_request_id_exactly(rid: str | int) -> None:
    _, server = pair()
    [event] = server.receive({"jsonrpc": "2.0", "id": rid, "method": "tools/list"})
    assert isinstance(event, ev.RequestReceived) and event.id == rid
    assert server.respond(rid, {"tools": []}) == {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}


@requirement("basic-id-not-null")
@pytest.mark.parametrize("bad_id", [None, 1.5, True, {}, []])
def test_a_request_id_that_is_not_a_string_or_integer_is_invalid(bad_id: Any) -> None:
    _, server = pair()
    events = server.receive({"jsonrpc": "2.0", "id": bad_id, "method": "tools/list"})
    [message] = sent(events)
    assert message["error"]["code"] == -32600 and message["id"] is None


@pytest.mark.parametrize(
    "raw", [b"{not json", b"\xff\xfe{}", b'{"jsonrpc":"2.0",\x00"id":1}', b"[" * 200 + b"]" * 200]
)
def test_undecodable_input_is_a_parse_error_with_null_id(raw: bytes) -> None:
    _, server = pair()
    [message] = sent(server.receive_data(raw))
    assert message == {"jsonrpc": "2.0", "id": None, "error": message["error"]}
    assert message["error"]["code"] == -32700


@requirement("basic-no-batch")
@pytest.mark.parametrize("value", [[], [{"jsonrpc": "2.0", "id": 1, "method": "ping"}], "str", 42, None])
def test_values_that_are_not_one_message_object_are_invalid_requests(value: Any) -> None:
    _, server = pair()
    assert error_code(server.receive(value)) == -32600


@requirement("basic-jsonrpc-version")
@pytest.mark.parametrize(
    "envelope", [{"id": 1, "method": "ping"}, {"jsonrpc": "1.0", "id": 1, "method": "ping"}]
)
def test_a_message_without_jsonrpc_2_0_is_invalid_and_keeps_its_id(envelope: dict[str, Any]) -> None:
    _, server = pair()
    [message] = sent(server.receive(envelope))
    assert message["error"]["code"] == -32600 and message["id"] == 1


@requirement("basic-response-result-xor-error")
def test_a_response_with_both_result_and_error_fails_its_request_and_is_not_answered() -> None:
    client, _ = pair()
    rid, _ = client.send_request("tools/list")
    bad = {"jsonrpc": "2.0", "id": rid, "result": {}, "error": {"code": 1, "message": "x"}}
    events = client.receive(bad)
    assert sent(events) == []  # a reply to a response would carry an id the peer reads as its own
    [failed] = [e for e in events if isinstance(e, ev.ErrorReceived)]
    assert failed.id == rid and failed.error.code == -32600


@pytest.mark.parametrize(
    "bad",
    [
        {"jsonrpc": "2.0", "result": "x"},
        {"jsonrpc": "2.0", "error": {"message": "no code"}},
        {"jsonrpc": "1.0", "result": {}},
        {"jsonrpc": "2.0", "id": None, "result": {}},
    ],
)
def test_a_malformed_response_is_never_answered(bad: dict[str, Any]) -> None:
    client, _ = pair()
    rid, _ = client.send_request("tools/list")
    events = client.receive({"id": rid, **bad})
    assert sent(events) == []
    assert [type(e) for e in events] in ([ev.ErrorReceived], [])


@requirement("capability-undeclared-method")
def test_a_request_for_a_capability_the_server_did_not_declare_is_method_not_found() -> None:
    _, server = pair(server_caps={"tools": {}})
    message = sent(server.receive({"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}))[0]
    assert message["error"]["code"] == -32601
    assert "'prompts'" in message["error"]["message"]


def test_an_unknown_method_is_method_not_found() -> None:
    _, server = pair()
    assert error_code(server.receive({"jsonrpc": "2.0", "id": 5, "method": "no/such"})) == -32601


def test_a_server_only_method_sent_by_the_client_is_method_not_found() -> None:
    _, server = pair()
    assert (
        error_code(server.receive({"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage"})) == -32601
    )


@requirement("capability-local-check")
def test_sending_a_request_the_peer_did_not_declare_raises_before_anything_is_sent() -> None:
    client, server = pair(client_caps={})
    with pytest.raises(CapabilityError, match="sampling"):
        server.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})
    with pytest.raises(CapabilityError, match="prompts"):
        client.send_request("prompts/list")


def test_url_elicitation_needs_the_url_sub_capability() -> None:
    _, server = pair(client_caps={"elicitation": {}})
    server.send_request("elicitation/create", {"message": "m", "requestedSchema": {"type": "object"}})
    with pytest.raises(CapabilityError, match=r"elicitation\.url"):
        server.send_request(
            "elicitation/create", {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"}
        )


def test_tools_in_sampling_need_the_sampling_tools_sub_capability() -> None:
    _, server = pair(client_caps={"sampling": {}})
    with pytest.raises(CapabilityError, match=r"sampling\.tools"):
        server.send_request(
            "sampling/createMessage", {"messages": [], "maxTokens": 1, "tools": [{"name": "t"}]}
        )


@requirement("capability-list-changed-declared")
def test_list_changed_notifications_are_only_sent_when_declared() -> None:
    _, server = pair(server_caps={"tools": {}})
    with pytest.raises(CapabilityError, match="listChanged"):
        server.send_notification("notifications/tools/list_changed")
    client, _ = pair(server_caps={"tools": {}})
    assert client.receive({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) == []


def test_requests_flow_both_ways_at_once_with_independent_ids() -> None:
    client, server = pair(client_caps={"roots": {}})
    c_id, c_msg = client.send_request("tools/list")
    s_id, s_msg = server.send_request("roots/list")
    [c_req] = server.receive(c_msg)
    [s_req] = client.receive(s_msg)
    assert isinstance(c_req, ev.RequestReceived) and isinstance(s_req, ev.RequestReceived)
    roots_reply = client.respond(s_req.id, {"roots": []})
    tools_reply = server.respond(c_req.id, {"tools": []})
    assert roots_reply is not None and tools_reply is not None
    [got_roots] = server.receive(roots_reply)
    [got_tools] = client.receive(tools_reply)
    assert isinstance(got_roots, ev.ResponseReceived) and got_roots.id == s_id
    assert isinstance(got_tools, ev.ResponseReceived) and got_tools.id == c_id


@requirement("cancel-no-response")
def test_a_cancelled_request_gets_no_response_and_a_late_one_is_ignored() -> None:
    client, server = pair()
    rid, message = client.send_request("tools/call", {"name": "x"})
    server.receive(message)
    cancel = client.cancel(rid, "user gave up")
    assert cancel is not None and cancel["params"] == {"requestId": rid, "reason": "user gave up"}
    [event] = server.receive(cancel)
    assert event == ev.CancelledByPeer(rid, "user gave up")
    assert server.respond(rid, {"content": []}) is None
    late: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": {"content": []}}
    assert client.receive(late) == []


@requirement("cancel-initialize")
def test_initialize_cannot_be_cancelled() -> None:
    client = Connection(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities={})
    rid, _ = client.initialize()
    assert client.cancel(rid) is None


def test_cancellation_of_an_unknown_request_is_ignored() -> None:
    _, server = pair()
    assert (
        server.receive({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 404}})
        == []
    )


@pytest.mark.parametrize("rid", [{}, [], None, True, 1.0, "1"])
def test_a_cancel_naming_no_valid_request_id_is_ignored_and_cancels_nothing(rid: Any) -> None:
    _, server = pair()
    server.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}})
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    assert server.receive(note) == []  # True and 1.0 hash like 1, but are not the request id 1
    assert not server.is_cancelled(1)


@requirement("progress-increasing")
def test_progress_must_increase_and_stops_after_the_response() -> None:
    client, server = pair()
    rid, message = client.send_request("tools/call", {"name": "x", "_meta": {"progressToken": "tok"}})
    server.receive(message)
    first = server.progress(rid, 1, 10, "one")
    assert first is not None and first["params"] == {
        "progressToken": "tok",
        "progress": 1,
        "total": 10,
        "message": "one",
    }
    [event] = client.receive(first)
    assert event == ev.ProgressReceived(rid, 1, 10, "one")
    with pytest.raises(LocalError, match="increase"):
        server.progress(rid, 1)
    reply = server.respond(rid, {"content": []})
    assert reply is not None
    assert server.progress(rid, 5) is None
    client.receive(reply)
    assert client.receive(first) == []  # progress after completion is ignored


def test_no_progress_is_sent_when_the_request_asked_for_none() -> None:
    client, server = pair()
    rid, message = client.send_request("tools/call", {"name": "x"})
    server.receive(message)
    assert server.progress(rid, 1) is None


@requirement("logging-set-level")
def test_set_level_filters_log_messages_by_rfc5424_severity() -> None:
    client, server = pair()
    _, message = client.send_request("logging/setLevel", {"level": "warning"})
    [reply] = sent(server.receive(message))
    assert reply["result"] == {}
    assert server.log("info", "quiet") is None
    note = server.log("error", {"detail": 1}, "db")
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "error", "data": {"detail": 1}, "logger": "db"},
    }


def test_an_unknown_log_level_is_invalid_params() -> None:
    client, server = pair()
    _, message = client.send_request("logging/setLevel", {"level": "loud"})
    assert error_code(server.receive(message)) == -32602


def test_a_duplicate_in_flight_request_id_is_rejected() -> None:
    _, server = pair()
    server.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert error_code(server.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})) == -32600


def test_feature_table_gates_each_feature_by_the_version_that_has_it() -> None:
    assert not has("2024-11-05", Feature.AUDIO_CONTENT) and has("2025-03-26", Feature.AUDIO_CONTENT)
    assert not has("2025-03-26", Feature.STRUCTURED_OUTPUT) and has("2025-06-18", Feature.STRUCTURED_OUTPUT)
    assert has("2025-06-18", Feature.ELICITATION) and not has("2025-03-26", Feature.ELICITATION)
    assert not has("2025-06-18", Feature.ICONS) and has("2025-11-25", Feature.ICONS)
    assert not has("2025-06-18", Feature.SAMPLING_TOOLS) and has("2025-11-25", Feature.SAMPLING_TOOLS)
    assert has("2025-03-26", Feature.JSONRPC_BATCH) and not has("2025-06-18", Feature.JSONRPC_BATCH)


@requirement("modern-input-required-methods")
def test_only_three_methods_may_answer_input_required() -> None:
    server = Connection(Role.SERVER, info={"name": "s", "version": "1"}, capabilities=SERVER_CAPS)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    for rid, method in ((1, "tools/list"), (2, "tools/call")):
        server.receive(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": meta, "name": "x"}}
        )
    asked = {"resultType": "input_required", "requestState": "s"}
    refused = server.respond(1, asked)
    allowed = server.respond(2, asked)
    assert refused is not None and refused["error"]["code"] == -32603
    assert allowed is not None and allowed["result"]["resultType"] == "input_required"
