"""Opaque pagination cursors (server utilities "Pagination"; also tasks/list, both sides): an invalid
cursor is -32602.

A cursor is accepted only in the exact form this server issues, so each page has one spelling and
a cache keyed by the decoded page cannot be grown by rewording the same cursor.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final

from .errors import InvalidParams

__all__ = ["canonical", "page"]

_PREFIX: Final = "mcpkit:"
_MAX_CURSOR: Final = 64  # far longer than any cursor this server issues


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{offset}".encode()).decode("ascii")


def _decode(cursor: Any, size: int) -> int:
    if not isinstance(cursor, str):
        raise InvalidParams("Invalid params: cursor must be a string")
    digits = ""
    if len(cursor) <= _MAX_CURSOR:
        try:
            raw = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        except (binascii.Error, UnicodeError, ValueError):
            raw = ""
        digits = raw.removeprefix(_PREFIX) if raw.startswith(_PREFIX) else ""
    if not (digits.isdigit() and len(digits) < 19 and int(digits) <= size and _encode(int(digits)) == cursor):
        shown = cursor if len(cursor) <= _MAX_CURSOR else cursor[:_MAX_CURSOR] + "..."
        raise InvalidParams(f"Invalid params: unknown cursor {shown!r}")
    return int(digits)


def canonical(start: int, page_size: int | None) -> bool:
    """Whether a page starting at `start` is one this server's own cursors lead to."""
    return start == 0 or (page_size is not None and start % page_size == 0)


def page(total: int, cursor: Any, page_size: int | None) -> tuple[int, int, str | None]:
    """(start, stop, next cursor) of the page `cursor` names within `total` items."""
    start = 0 if cursor is None else _decode(cursor, total)
    if page_size is None:
        return start, total, None
    stop = min(start + page_size, total)
    return start, stop, _encode(stop) if stop < total else None
