"""Requests the page started and may still cancel, by the id the page gave them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

__all__ = ["Running"]


class Running:
    """The cancel scope of each running call; `cancel(id)` stops it, and the client tells the server
    (notifications/cancelled) as it stops waiting."""

    def __init__(self) -> None:
        self.scopes: dict[str, anyio.CancelScope] = {}

    @asynccontextmanager
    async def run(self, call_id: str) -> AsyncIterator[anyio.CancelScope]:
        with anyio.CancelScope() as scope:
            self.scopes[call_id] = scope
            try:
                yield scope
            finally:
                self.scopes.pop(call_id, None)

    def cancel(self, call_id: str) -> bool:
        scope = self.scopes.get(call_id)
        if scope is None:
            return False
        scope.cancel()
        return True
