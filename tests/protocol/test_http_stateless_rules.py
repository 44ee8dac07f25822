"""The stateless era's HTTP header rules (2026-07-28 transports "Request Metadata", "Server Validation")."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.errors import MCPError
from mcpkit.protocol.http_header_values import decode_value as decode_header_value
from mcpkit.protocol.http_header_values import encode_value as encode_header_value
from mcpkit.protocol.http_request_headers import tool_headers
from mcpkit.protocol.http_stateless import check_request_headers, repeated_fields, status_for_error

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_values_are_encoded_as_the_spec_table_shows_and_decode_back(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize("raw", ["=?base64?!!!?=", "bad\x01value"])
def test_broken_sentinels_and_control_characters_are_header_mismatch(raw: str) -> None:
    with pytest.raises(MCPError) as caught:
        decode_header_value(raw)
    assert caught.value.code == -32020


def test_only_properties_chains_carry_x_mcp_header() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {
                "type": "object",
                "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}},
            },
        },
    }
    assert list(tool_headers({"inputSchema": schema})) == [
        ("Region", ("region",)),
        ("Tenant", ("opts", "tenant")),
    ]
    broken = {
        "type": "object",
        "properties": {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "N"}}},
    }
    with pytest.raises(ValueError):
        tool_headers({"inputSchema": broken})


def headers(**extra: str) -> dict[str, str]:
    return {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "run", **extra}


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "run", "arguments": arguments, "_meta": META}


MIRRORED = [("Region", ("region",)), ("Count", ("count",))]


def test_matching_headers_pass_and_numbers_compare_numerically() -> None:
    check_request_headers(
        headers(**{"mcp-param-region": "eu", "mcp-param-count": "42"}),
        "tools/call",
        call({"region": "eu", "count": 42.0}),
        MIRRORED,
    )
    check_request_headers(headers(), "tools/call", call({"region": None}), MIRRORED)  # null: no header


@pytest.mark.parametrize(
    ("hdrs", "arguments"),
    [
        (headers(**{"mcp-protocol-version": "2025-11-25"}), {}),
        (headers(**{"mcp-method": "tools/list"}), {}),
        ({"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}, {}),  # no Mcp-Name
        (headers(**{"mcp-name": "other"}), {}),
        (headers(), {"region": "eu"}),  # the body has it, the header does not
        (headers(**{"mcp-param-region": "us"}), {"region": "eu"}),
    ],
)
def test_any_missing_or_different_header_is_header_mismatch(
    hdrs: dict[str, str], arguments: dict[str, Any]
) -> None:
    with pytest.raises(MCPError) as caught:
        check_request_headers(hdrs, "tools/call", call(arguments), MIRRORED)
    assert caught.value.code == -32020


def test_modern_errors_travel_with_their_http_status() -> None:
    assert [status_for_error(c) for c in (-32601, -32602, -32020, -32021, -32022, -32603)] == [
        404,
        400,
        400,
        400,
        400,
        200,
    ]


@pytest.mark.parametrize("name", ["mcp-method", "mcp-name", "mcp-protocol-version", "mcp-param-region"])
def test_a_repeated_metadata_header_is_header_mismatch(name: str) -> None:
    hdrs = headers(**{"mcp-param-region": "eu"})
    with pytest.raises(MCPError) as caught:
        check_request_headers(hdrs, "tools/call", call({"region": "eu"}), MIRRORED, frozenset({name}))
    assert caught.value.code == -32020 and name in caught.value.message


@pytest.mark.parametrize("arguments", [{}, {"region": None}])
def test_an_orphan_param_header_without_its_body_value_is_header_mismatch(arguments: dict[str, Any]) -> None:
    with pytest.raises(MCPError) as caught:
        check_request_headers(headers(**{"mcp-param-region": "eu"}), "tools/call", call(arguments), MIRRORED)
    assert caught.value.code == -32020 and "no value" in caught.value.message


@pytest.mark.parametrize("header", ["1", "9007199254740992", "9007199254740992.0", "9.007199254740992e15"])
def test_an_integer_past_2_53_is_compared_exactly_not_skipped(header: str) -> None:
    body = call({"count": 2**53 + 1})
    with pytest.raises(MCPError) as caught:
        check_request_headers(headers(**{"mcp-param-count": header}), "tools/call", body, MIRRORED)
    assert caught.value.code == -32020


def test_an_integer_past_2_53_matches_its_exact_decimal_text() -> None:
    for header in ("9007199254740993", "9007199254740993.00"):
        check_request_headers(
            headers(**{"mcp-param-count": header}), "tools/call", call({"count": 2**53 + 1}), MIRRORED
        )
    check_request_headers(headers(), "tools/call", call({"count": 2**53 + 1}), MIRRORED)  # cannot mirror


@pytest.mark.parametrize(("header", "value"), [("4_2", 42), ("true", 1), ("1", True), ("{}", {"a": 1})])
def test_numbers_booleans_and_objects_never_match_loosely(header: str, value: object) -> None:
    with pytest.raises(MCPError):
        check_request_headers(
            headers(**{"mcp-param-count": header}), "tools/call", call({"count": value}), MIRRORED
        )


def test_repeated_fields_names_only_what_occurs_twice() -> None:
    raw = [(b"Mcp-Method", b"a"), (b"host", b"x"), (b"mcp-method", b"b")]
    assert repeated_fields(raw) == {"mcp-method"}
