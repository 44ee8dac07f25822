"""The client's side of Streamable HTTP "Request Metadata" (2026-07-28) as pure functions. No I/O.

Spec 2026-07-28 transports "Streamable HTTP": "Protocol Version Header" (equal to the body's
`_meta` version), "Standard Request Headers" (Mcp-Method, Mcp-Name), "Custom Headers from Tool
Parameters" (Mcp-Param-{Name} for `x-mcp-header` properties; a tool with an invalid annotation is
dropped from tools/list) and "Value Encoding" (the `=?base64?...?=` sentinel). The server's checks
of the same headers live in `http_stateless`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from .http_header_values import encode_value, mirror_value, value_at
from .jsonrpc import JSON
from .methods import HEADER_ITEMS
from .stateless import PROTOCOL_VERSION

__all__ = ["ToolHeaders", "encode_value", "mirror_value", "request_headers", "screen_tools", "tool_headers"]

# (the `x-mcp-header` token, the chain of `properties` keys leading to the annotated property)
ToolHeaders = tuple[tuple[str, tuple[str, ...]], ...]

_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 5.1 field-name token
_PRIMITIVE: Final = frozenset({"string", "integer", "boolean"})
# Keywords whose values are data, not schemas: an `x-mcp-header` key inside them annotates nothing.
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples", "required"})


def _positions(schema: object, path: tuple[str, ...] | None) -> Iterator[tuple[tuple[str, ...] | None, JSON]]:
    """Every subschema with its `properties` path from the root; None once the chain leaves `properties`."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key in _DATA_KEYWORDS or key == "x-mcp-header":
            continue
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from _positions(sub, (*path, name) if path is not None else None)
        elif isinstance(value, dict):
            yield from _positions(value, None)  # items, not, if/then/else, $defs, ...: off the chain
        elif isinstance(value, list):
            for item in value:
                yield from _positions(item, None)


def tool_headers(tool: JSON) -> ToolHeaders:
    """The `x-mcp-header` parameters of `tool`; ValueError names the broken rule ("Schema Extension")."""
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: dict[str, str] = {}
    for path, schema in _positions(tool.get("inputSchema"), ()):
        if "x-mcp-header" not in schema:
            continue
        token = schema["x-mcp-header"]
        if not path:
            raise ValueError("x-mcp-header sits outside a chain of `properties` from the schema root")
        where = ".".join(path)
        if not isinstance(token, str) or _TOKEN.fullmatch(token) is None:
            raise ValueError(f"property {where!r}: x-mcp-header {token!r} is not an HTTP field-name token")
        kind = schema.get("type")
        if kind not in _PRIMITIVE:
            raise ValueError(f"property {where!r}: x-mcp-header on type {kind!r}, not string/integer/boolean")
        other = seen.setdefault(token.lower(), where)
        if other != where:
            raise ValueError(f"x-mcp-header {token!r} on {where!r} repeats the one on {other!r}")
        found.append((token, path))
    return tuple(found)


def screen_tools(tools: list[Any]) -> tuple[list[Any], dict[str, ToolHeaders], list[str]]:
    """Split a tools/list page: (the tools kept, their mirrored parameters, why each other was dropped)."""
    kept: list[Any] = []
    mirrored: dict[str, ToolHeaders] = {}
    dropped: list[str] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str):
            kept.append(tool)  # not ours to judge: the client's own checks see it
            continue
        try:
            headers = tool_headers(tool)
        except ValueError as exc:
            dropped.append(f"tool {name!r}: {exc}")
            continue
        kept.append(tool)
        if headers:
            mirrored[name] = headers
    return kept, mirrored, dropped


def request_headers(message: JSON, mirrored: Mapping[str, ToolHeaders]) -> dict[str, str]:
    """The metadata headers for one request POST; empty for a request of the handshake era.

    MCP-Protocol-Version repeats the body's `_meta` version, so the two always agree.
    """
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    method = message.get("method")
    if not isinstance(version, str) or not isinstance(method, str):
        return {}
    assert isinstance(params, dict)
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    field = HEADER_ITEMS.get(method)
    name = params.get(field) if field is not None else None
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_value(name)
    if method == "tools/call" and isinstance(name, str):
        for token, path in mirrored.get(name, ()):
            value = mirror_value(value_at(params.get("arguments"), path))
            if value is not None:
                headers[f"Mcp-Param-{token}"] = encode_value(value)
    return headers
