"""Streamable HTTP rules of the stateless era (2026-07-28) as pure functions. No I/O.

Spec 2026-07-28 transports "Streamable HTTP": "Request Metadata" (MCP-Protocol-Version, Mcp-Method,
Mcp-Name, Mcp-Param-{Name} from `x-mcp-header`), "Value Encoding" (the Base64 sentinel) and
"Server Validation" (any mismatch is 400 with HeaderMismatch -32020), and the status codes stateless
errors travel with (400 for version, _meta and capability errors; 404 for an unknown method). mcpkit's
own: busy (-32010) is 429 and a shared store out of reach (-32011) 503, both with Retry-After.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from decimal import Decimal
from typing import Final

from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    SERVER_BUSY,
    STORE_UNAVAILABLE,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
)
from .http_header_values import decode_value, mirror_value, value_at
from .jsonrpc import JSON
from .methods import HEADER_ITEMS
from .stateless import PROTOCOL_VERSION

__all__ = ["check_request_headers", "repeated_fields", "retry_after", "status_for_error"]

_STATUS: Final = {
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    STORE_UNAVAILABLE: 503,
    SERVER_BUSY: 429,  # RFC 6585 §4 Too Many Requests
}


_NUMBER: Final = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_STANDARD: Final = frozenset({"mcp-protocol-version", "mcp-method", "mcp-name"})


def repeated_fields(raw: Iterable[tuple[bytes, bytes]]) -> frozenset[str]:
    """The (lower-case) names that occur more than once among an ASGI scope's headers."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for name, _ in raw:
        key = name.decode("latin-1").lower()
        (repeated if key in seen else seen).add(key)
    return frozenset(repeated)


def status_for_error(code: int) -> int:
    """The HTTP status a stateless JSON-RPC error is sent with (200 for the rest)."""
    return _STATUS.get(code, 200)


def retry_after(error: object) -> str:
    """The Retry-After seconds (RFC 9110 §10.2.3) of a JSON-RPC error object: its `data.retryAfterMs`
    rounded up, else 1."""
    data = error.get("data") if isinstance(error, dict) else None
    wait = data.get("retryAfterMs") if isinstance(data, dict) else None
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not math.isfinite(wait):
        return "1"
    return str(max(1, math.ceil(wait / 1000)))


def check_request_headers(
    headers: dict[str, str],
    method: str,
    params: JSON,
    mirrored: Sequence[tuple[str, tuple[str, ...]]],
    repeated: Collection[str] = (),
) -> None:
    """Server Validation: every mirrored header present and equal to the body; -32020 otherwise.

    `headers` has lower-case names; `mirrored` lists the called tool's `x-mcp-header` parameters;
    `repeated` names the headers the request carried more than once.
    """
    for name in sorted(repeated):
        # A proxy may act on the first copy while this check would read the last: refuse the ambiguity.
        if name in _STANDARD or name.startswith("mcp-param-"):
            raise _mismatch(f"the {name} header appears more than once")
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
    field = HEADER_ITEMS.get(method)
    if field is not None:
        raw = headers.get("mcp-name")
        if raw is None:
            raise _mismatch(f"Mcp-Name header is required for {method}")
        if decode_value(raw) != params.get(field):
            raise _mismatch(f"Mcp-Name header value does not match body value {params.get(field)!r}")
    arguments = params.get("arguments")
    for name, path in mirrored:
        _check_param(name, path, value_at(arguments, path), headers.get(f"mcp-param-{name.lower()}"))


def _check_param(name: str, path: tuple[str, ...], value: object, raw: str | None) -> None:
    """One Mcp-Param-{name} header against the body value at `path` (None: absent or null)."""
    where = ".".join(path)
    if raw is None:
        # A null or absent argument carries no header; neither can one the client cannot mirror
        # (an object, a fraction, an integer past 2^53), which is therefore not expected either.
        if mirror_value(value) is not None:
            raise _mismatch(f"Mcp-Param-{name} header is required: the body has {where}")
        return
    if value is None:
        raise _mismatch(f"Mcp-Param-{name} header is present but the body has no value at {where}")
    if not _same(decode_value(raw), value):
        raise _mismatch(f"Mcp-Param-{name} header value does not match body value {value!r}")


def _same(header: str, value: object) -> bool:
    """Whether a decoded header equals a body value: numbers exactly and numerically (42.0 is 42, and an
    integer past 2^53 is compared digit for digit, never rounded), the rest as their mirrored text."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return isinstance(value, str | bool) and header == mirror_value(value)
    return _NUMBER.fullmatch(header) is not None and Decimal(header) == Decimal(value)


def _mismatch(why: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, f"Header mismatch: {why}")
