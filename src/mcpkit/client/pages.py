"""Pagination (server utilities "Pagination"): every page of a list, following nextCursor."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..protocol.jsonrpc import JSON

__all__ = ["all_pages"]


async def all_pages(list_page: Callable[[str | None], Awaitable[JSON]], key: str) -> list[JSON]:
    """The `key` items of every page `list_page(cursor)` returns, from the first (cursor None) until a
    page has no nextCursor."""
    items: list[JSON] = []
    cursor: str | None = None
    while True:
        page = await list_page(cursor)
        items.extend(page.get(key, []))
        cursor = page.get("nextCursor")
        if not cursor:
            return items
