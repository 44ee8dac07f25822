"""How values travel in 2026-07-28 Streamable HTTP headers, for both ends (transports "Value Encoding").

A value goes as is when it is plain printable ASCII, else as the Base64 sentinel `=?base64?...?=` of
its UTF-8 (and so does a plain value that looks like the sentinel). Arguments are mirrored by the
"Type conversion" rules. Mcp-Name mirrors the item a request names (methods.HEADER_ITEMS).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from .errors import HEADER_MISMATCH, MCPError

__all__ = ["decode_value", "encode_value", "mirror_value", "value_at"]

_PREFIX, _SUFFIX = "=?base64?", "?="
# Sent plain: printable ASCII and inner spaces. Tabs and other control characters, non-ASCII and edge
# spaces go as Base64. Accepted plain: the same plus inner tabs, which RFC 9110 allows in a field value.
_PLAIN: Final = re.compile(r"([\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?)?")
_ACCEPTED: Final = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?")
_MAX_SAFE_INT: Final = 2**53 - 1


def encode_value(value: str) -> str:
    sentinel = value.startswith(_PREFIX) and value.endswith(_SUFFIX)
    if _PLAIN.fullmatch(value) is not None and not sentinel:
        return value
    return f"{_PREFIX}{base64.b64encode(value.encode()).decode('ascii')}{_SUFFIX}"


def decode_value(raw: str) -> str:
    """The value a header carries; HeaderMismatch (-32020) for invalid characters or a broken sentinel."""
    if raw.startswith(_PREFIX) and raw.endswith(_SUFFIX) and len(raw) >= len(_PREFIX) + len(_SUFFIX):
        try:
            return base64.b64decode(raw[len(_PREFIX) : -len(_SUFFIX)], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise MCPError(HEADER_MISMATCH, "Header mismatch: a Base64 value does not decode") from None
    if raw and _ACCEPTED.fullmatch(raw) is None:
        raise MCPError(HEADER_MISMATCH, "Header mismatch: a value has characters a header may not carry")
    return raw


def mirror_value(value: object) -> str | None:
    """The string an argument is mirrored as; None when absent, null, not primitive or past 2^53."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= _MAX_SAFE_INT else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INT:
        return str(int(value))  # "compare numerically": 42.0 and 42 are the same argument
    return value if isinstance(value, str) else None


def value_at(arguments: object, path: tuple[str, ...]) -> object:
    """The argument at a chain of `properties` keys, or None."""
    node = arguments
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node
