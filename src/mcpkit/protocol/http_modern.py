"""Streamable HTTP rules of the stateless era (2026-07-28) as pure functions. No I/O.

Spec 2026-07-28 transports "Streamable HTTP": "Request Metadata" (MCP-Protocol-Version, Mcp-Method,
Mcp-Name, Mcp-Param-{Name} from `x-mcp-header`), "Value Encoding" (the Base64 sentinel) and
"Server Validation" (any mismatch is 400 with HeaderMismatch -32020), and the status codes modern
errors travel with (400 for version, _meta and capability errors; 404 for an unknown method).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any, Final

from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
)
from .modern import PROTOCOL_VERSION

__all__ = [
    "NAMED_METHODS",
    "check_request_headers",
    "decode_header_value",
    "encode_header_value",
    "mirrored_parameters",
    "status_for_error",
]

JSON = dict[str, Any]

# Mcp-Name mirrors params.name or params.uri for these methods ("Standard Request Headers").
NAMED_METHODS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_PREFIX, _SUFFIX = "=?base64?", "?="
_SAFE: Final = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?")
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_MAX_SAFE_INT: Final = 2**53 - 1
_STATUS: Final = {
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def status_for_error(code: int) -> int:
    """The HTTP status a modern JSON-RPC error is sent with (200 for the rest)."""
    return _STATUS.get(code, 200)


def encode_header_value(value: str) -> str:
    """A header-safe form of `value`: as is, or the Base64 sentinel ("Value Encoding")."""
    plain = _SAFE.fullmatch(value) is not None and not (value.startswith(_PREFIX) and value.endswith(_SUFFIX))
    return value if plain else f"{_PREFIX}{base64.b64encode(value.encode()).decode('ascii')}{_SUFFIX}"


def decode_header_value(raw: str) -> str:
    """The value a header carries; HeaderMismatch for invalid characters or a broken sentinel."""
    if raw.startswith(_PREFIX) and raw.endswith(_SUFFIX) and len(raw) >= len(_PREFIX) + len(_SUFFIX):
        try:
            return base64.b64decode(raw[len(_PREFIX) : -len(_SUFFIX)], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise _mismatch("a Base64-encoded header value does not decode") from None
    if raw and _SAFE.fullmatch(raw) is None:
        raise _mismatch("a header value contains characters a header may not carry")
    return raw


def mirrored_parameters(schema: object) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(header name, property path) for each `x-mcp-header` reachable through `properties` only."""
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for key, sub in properties.items():
        if not isinstance(sub, dict):
            continue
        name = sub.get("x-mcp-header")
        if isinstance(name, str) and _TOKEN.fullmatch(name):
            yield name, (key,)
        for inner, path in mirrored_parameters(sub):
            yield inner, (key, *path)


def _header_form(value: object) -> str | None:
    """The string a primitive argument is mirrored as; None when it is absent, null or not primitive."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) <= _MAX_SAFE_INT:
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # "compare numerically": 42.0 and 42 are equal
    return value if isinstance(value, str) else None


def _at(arguments: object, path: tuple[str, ...]) -> object:
    node = arguments
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def check_request_headers(
    headers: dict[str, str], method: str, params: JSON, mirrored: list[tuple[str, tuple[str, ...]]]
) -> None:
    """Server Validation: every mirrored header present and equal to the body; -32020 otherwise.

    `headers` has lower-case names; `mirrored` lists the called tool's `x-mcp-header` parameters.
    """
    meta = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    header_version = headers.get("mcp-protocol-version")
    # A body without its version is malformed _meta (-32602, found by the core), not a mismatch.
    if body_version is not None and header_version != body_version:
        raise _mismatch(
            f"MCP-Protocol-Version header {header_version!r} does not match the body's {body_version!r}"
        )
    if headers.get("mcp-method") != method:
        raise _mismatch(
            f"Mcp-Method header {headers.get('mcp-method')!r} does not match body method {method!r}"
        )
    field = NAMED_METHODS.get(method)
    if field is not None:
        raw = headers.get("mcp-name")
        if raw is None:
            raise _mismatch(f"Mcp-Name header is required for {method}")
        if decode_header_value(raw) != params.get(field):
            raise _mismatch(f"Mcp-Name header value does not match body value {params.get(field)!r}")
    arguments = params.get("arguments")
    for name, path in mirrored:
        expected = _header_form(_at(arguments, path))
        raw = headers.get(f"mcp-param-{name.lower()}")
        if expected is None:
            continue  # a null or absent argument carries no header, and none is expected
        if raw is None:
            raise _mismatch(f"Mcp-Param-{name} header is required: the body has {'.'.join(path)}")
        if decode_header_value(raw) != expected:
            raise _mismatch(f"Mcp-Param-{name} header value does not match body value {expected!r}")


def _mismatch(why: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, f"Header mismatch: {why}")
