"""Streamable HTTP rules of the stateless era (2026-07-28) as pure functions. No I/O.

Spec 2026-07-28 transports "Streamable HTTP": "Request Metadata" (MCP-Protocol-Version, Mcp-Method,
Mcp-Name, Mcp-Param-{Name} from `x-mcp-header`), "Value Encoding" (the Base64 sentinel) and
"Server Validation" (any mismatch is 400 with HeaderMismatch -32020), and the status codes modern
errors travel with (400 for version, _meta and capability errors; 404 for an unknown method).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
)
from .http_header_values import NAMED_METHODS, decode_value, mirror_value, value_at
from .modern import PROTOCOL_VERSION

__all__ = ["check_request_headers", "status_for_error"]

JSON = dict[str, Any]

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


def check_request_headers(
    headers: dict[str, str], method: str, params: JSON, mirrored: Sequence[tuple[str, tuple[str, ...]]]
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
        if decode_value(raw) != params.get(field):
            raise _mismatch(f"Mcp-Name header value does not match body value {params.get(field)!r}")
    arguments = params.get("arguments")
    for name, path in mirrored:
        expected = mirror_value(value_at(arguments, path))
        raw = headers.get(f"mcp-param-{name.lower()}")
        if expected is None:
            continue  # a null or absent argument carries no header, and none is expected
        if raw is None:
            raise _mismatch(f"Mcp-Param-{name} header is required: the body has {'.'.join(path)}")
        if decode_value(raw) != expected:
            raise _mismatch(f"Mcp-Param-{name} header value does not match body value {expected!r}")


def _mismatch(why: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, f"Header mismatch: {why}")
