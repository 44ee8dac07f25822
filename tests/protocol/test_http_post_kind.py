"""Which way a Streamable HTTP POST goes, decided from its headers and message alone (no ASGI)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.http_rules import PostKind, post_kind
from mcpkit.protocol.jsonrpc import Message, classify

MODERN_META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}


def message(method: str | None, params: dict[str, Any] | None = None, rid: int | None = 1) -> Message:
    obj: dict[str, Any] = {"jsonrpc": "2.0"}
    if method is None:
        obj |= {"id": rid, "result": {}}
    else:
        obj["method"] = method
        if rid is not None:
            obj["id"] = rid
        if params is not None:
            obj["params"] = params
    return classify(obj)


def test_a_request_with_the_modern_meta_is_of_the_stateless_era_in_either_server_mode() -> None:
    tools = message("tools/list", MODERN_META)
    assert post_kind({}, tools, keeps_sessions=True) is PostKind.STATELESS_ERA
    assert post_kind({}, tools, keeps_sessions=False) is PostKind.STATELESS_ERA
    named = {"mcp-session-id": "abc"}  # a session header does not pull it into the handshake era
    assert post_kind(named, tools, keeps_sessions=True) is PostKind.STATELESS_ERA


def test_a_modern_protocol_version_header_alone_selects_the_stateless_era() -> None:
    headers = {"mcp-protocol-version": "2026-07-28"}
    assert post_kind(headers, message("tools/list"), keeps_sessions=True) is PostKind.STATELESS_ERA


@pytest.mark.parametrize("header", ["2025-06-18", "2099-01-01", "garbage"])
def test_a_handshake_era_or_unknown_version_header_does_not_select_the_stateless_era(header: str) -> None:
    headers = {"mcp-protocol-version": header, "mcp-session-id": "abc"}
    assert post_kind(headers, message("tools/list"), keeps_sessions=True) is PostKind.IN_SESSION


def test_only_a_request_can_be_of_the_stateless_era() -> None:
    headers = {"mcp-protocol-version": "2026-07-28"}
    assert post_kind(headers, message(None), keeps_sessions=True) is PostKind.IN_SESSION


def test_a_2026_notification_naming_no_session_is_accepted_and_dropped() -> None:
    """Issue 31 item 22: as the official servers do (202), not refused for want of a session."""
    headers = {"mcp-protocol-version": "2026-07-28"}
    note = message("notifications/cancelled", {"requestId": 1}, rid=None)
    for keeps_sessions in (True, False):
        assert post_kind(headers, note, keeps_sessions=keeps_sessions) is PostKind.STATELESS_NOTICE
    named = {**headers, "mcp-session-id": "abc"}
    assert post_kind(named, note, keeps_sessions=True) is PostKind.IN_SESSION


def test_a_server_without_sessions_serves_every_handshake_era_message_sessionless() -> None:
    for each in (message("initialize", {}), message("tools/list"), message("notifications/x", rid=None)):
        assert post_kind({}, each, keeps_sessions=False) is PostKind.SESSIONLESS
    named = {"mcp-session-id": "abc"}
    assert post_kind(named, message("tools/list"), keeps_sessions=False) is PostKind.SESSIONLESS


def test_an_initialize_naming_no_session_opens_one() -> None:
    assert post_kind({}, message("initialize", {}), keeps_sessions=True) is PostKind.NEW_SESSION


def test_an_initialize_naming_a_session_goes_to_that_session_which_refuses_it() -> None:
    named = {"mcp-session-id": "abc"}
    assert post_kind(named, message("initialize", {}), keeps_sessions=True) is PostKind.IN_SESSION


def test_every_other_message_belongs_to_the_session_it_names_or_to_none() -> None:
    for each in (message("tools/list"), message("notifications/x", rid=None), message(None)):
        assert post_kind({}, each, keeps_sessions=True) is PostKind.IN_SESSION
