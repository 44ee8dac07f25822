"""Opaque pagination cursors (server utilities "Pagination"): an invalid cursor is -32602."""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from ..protocol.errors import INVALID_PARAMS, MCPError

__all__ = ["page"]

_PREFIX: Final = "mcpkit:"


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode("ascii")


def _decode(cursor: Any, size: int) -> int:
    if not isinstance(cursor, str):
        raise MCPError(INVALID_PARAMS, "Invalid params: cursor must be a string")
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        raw = ""
    digits = raw.removeprefix(_PREFIX)
    if not raw.startswith(_PREFIX) or not digits.isdigit() or int(digits) > size:
        raise MCPError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}")
    return int(digits)


def page(total: int, cursor: Any, page_size: int | None) -> tuple[int, int, str | None]:
    """(start, stop, next cursor) of the page `cursor` names within `total` items."""
    start = 0 if cursor is None else _decode(cursor, total)
    if page_size is None:
        return start, total, None
    stop = min(start + page_size, total)
    return start, stop, _encode(stop) if stop < total else None
