"""The client's request metadata headers for 2026-07-28 (transports "Streamable HTTP" "Request Metadata").

Pure functions: no sockets. Values the client encodes are decoded with the server's own decoder
(protocol.http_stateless), so both sides of mcpkit agree on the Base64 sentinel.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.protocol.http_header_values import decode_value as decode_header_value
from mcpkit.protocol.http_request_headers import (
    encode_value,
    mirror_value,
    request_headers,
    screen_tools,
    tool_headers,
)
from mcpkit.protocol.stateless import request_meta

JSON = dict[str, Any]
MODERN = "2026-07-28"


def modern(method: str, params: JSON | None = None, version: str = MODERN) -> JSON:
    body = dict(params or {})
    body["_meta"] = request_meta(version, {}, {"name": "t", "version": "1"})
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}


def tool(name: str, properties: JSON, **extra: Any) -> JSON:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties, **extra}}


# ---- "Value Encoding" -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "header"),
    [  # the spec's own encoding examples
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_values_are_encoded_as_the_spec_examples_show(value: str, header: str) -> None:
    assert encode_value(value) == header


@pytest.mark.parametrize("value", ["\tindented", "a\tb", "line1\r\nline2", "x\x00y", "trailing "])
def test_control_characters_and_edge_spaces_go_as_base64(value: str) -> None:
    assert encode_value(value).startswith("=?base64?")


def test_inner_spaces_and_the_empty_string_stay_plain() -> None:
    assert encode_value("us west 1") == "us west 1"
    assert encode_value("") == ""


@given(st.text())
def test_every_encoded_value_is_header_safe_and_decodes_back(value: str) -> None:
    header = encode_value(value)
    assert all(0x20 <= ord(c) <= 0x7E for c in header)
    assert decode_header_value(header) == value


@pytest.mark.parametrize(
    ("value", "text"),
    [("a", "a"), (42, "42"), (-7, "-7"), (True, "true"), (False, "false"), (3.0, "3")],
)
def test_arguments_are_mirrored_as_the_type_conversion_says(value: object, text: str) -> None:
    assert mirror_value(value) == text


@pytest.mark.parametrize("value", [None, 3.5, [1], {"a": 1}, 2**53])
def test_null_non_primitive_and_unsafe_integer_arguments_carry_no_header(value: object) -> None:
    assert mirror_value(value) is None


# ---- "Standard Request Headers" ----------------------------------------------------------------


def test_every_modern_request_names_its_version_and_method() -> None:
    assert request_headers(modern("tools/list"), {}) == {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/list",
    }


def test_the_protocol_version_header_repeats_the_bodys_meta_version() -> None:
    assert request_headers(modern("server/discover", version="2027-01-01"), {})["MCP-Protocol-Version"] == (
        "2027-01-01"
    )


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tools/call", {"name": "get_weather", "arguments": {}}, "get_weather"),
        ("prompts/get", {"name": "greet"}, "greet"),
        (
            "resources/read",
            {"uri": "file:///projects/myapp/config.json"},
            "file:///projects/myapp/config.json",
        ),
        ("resources/read", {"uri": "file:///tmp/é"}, "=?base64?ZmlsZTovLy90bXAvw6k=?="),
    ],
)
def test_mcp_name_mirrors_the_name_or_uri(method: str, params: JSON, name: str) -> None:
    assert request_headers(modern(method, params), {})["Mcp-Name"] == name


def test_a_handshake_era_request_gets_no_metadata_headers() -> None:
    legacy = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    assert request_headers(legacy, {}) == {}


# ---- "Custom Headers from Tool Parameters" -----------------------------------------------------


SQL = tool(
    "execute_sql",
    {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "query": {"type": "string"},
        "opts": {"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
    },
)


def test_annotated_parameters_are_found_along_properties_only() -> None:
    assert tool_headers(SQL) == (("Region", ("region",)), ("Tenant", ("opts", "tenant")), ("Dry", ("dry",)))


def test_a_tools_call_mirrors_each_annotated_argument_present() -> None:
    mirrored = {"execute_sql": tool_headers(SQL)}
    arguments = {"region": "us-west1", "query": "SELECT 1", "opts": {"tenant": 42}, "dry": False}
    headers = request_headers(modern("tools/call", {"name": "execute_sql", "arguments": arguments}), mirrored)
    assert headers["Mcp-Param-Region"] == "us-west1"
    assert headers["Mcp-Param-Tenant"] == "42"
    assert headers["Mcp-Param-Dry"] == "false"
    assert not any(k.lower() == "mcp-param-query" for k in headers)


def test_a_null_or_absent_argument_carries_no_header() -> None:
    mirrored = {"execute_sql": tool_headers(SQL)}
    arguments = {"region": None, "query": "SELECT 1"}
    headers = request_headers(modern("tools/call", {"name": "execute_sql", "arguments": arguments}), mirrored)
    assert not [k for k in headers if k.startswith("Mcp-Param-")]


def test_a_non_ascii_argument_goes_as_base64() -> None:
    mirrored = {"execute_sql": tool_headers(SQL)}
    arguments = {"region": "Zürich"}
    headers = request_headers(modern("tools/call", {"name": "execute_sql", "arguments": arguments}), mirrored)
    assert decode_header_value(headers["Mcp-Param-Region"]) == "Zürich"
    assert headers["Mcp-Param-Region"].startswith("=?base64?")


INVALID = [
    tool("empty", {"v": {"type": "string", "x-mcp-header": ""}}),
    tool("object", {"v": {"type": "object", "x-mcp-header": "V"}}),
    tool("array", {"v": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "V"}}),
    tool("null", {"v": {"type": "null", "x-mcp-header": "V"}}),
    tool("number", {"v": {"type": "number", "x-mcp-header": "V"}}),
    tool("untyped", {"v": {"x-mcp-header": "V"}}),
    tool(
        "same", {"a": {"type": "string", "x-mcp-header": "R"}, "b": {"type": "string", "x-mcp-header": "R"}}
    ),
    tool(
        "case", {"a": {"type": "string", "x-mcp-header": "My"}, "b": {"type": "string", "x-mcp-header": "my"}}
    ),
    tool("space", {"v": {"type": "string", "x-mcp-header": "My Region"}}),
    tool("colon", {"v": {"type": "string", "x-mcp-header": "Region:Primary"}}),
    tool("accent", {"v": {"type": "string", "x-mcp-header": "Région"}}),
    tool("tab", {"v": {"type": "string", "x-mcp-header": "Region\t1"}}),
    tool("not-a-string", {"v": {"type": "string", "x-mcp-header": 7}}),
    tool("in-items", {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}),
    tool("in-anyof", {"v": {"anyOf": [{"type": "string", "x-mcp-header": "V"}]}}),
    tool(
        "in-defs", {"v": {"$ref": "#/$defs/x"}}, **{"$defs": {"x": {"type": "string", "x-mcp-header": "V"}}}
    ),
    {"name": "at-root", "inputSchema": {"type": "object", "x-mcp-header": "Root"}},
]


@pytest.mark.parametrize("bad", INVALID, ids=[t["name"] for t in INVALID])
def test_a_tool_breaking_an_x_mcp_header_rule_is_dropped_and_the_rest_kept(bad: JSON) -> None:
    valid = tool("valid_tool", {"region": {"type": "string", "x-mcp-header": "Region"}})
    plain = tool("plain", {"q": {"type": "string"}})
    kept, mirrored, dropped = screen_tools([valid, bad, plain])
    assert [t["name"] for t in kept] == ["valid_tool", "plain"]
    assert mirrored == {"valid_tool": (("Region", ("region",)),)}
    assert len(dropped) == 1 and repr(bad["name"]) in dropped[0]


def test_an_annotation_inside_a_default_value_is_data_not_a_schema() -> None:
    odd = tool("odd", {"v": {"type": "object", "default": {"x-mcp-header": "V"}}})
    assert tool_headers(odd) == ()
