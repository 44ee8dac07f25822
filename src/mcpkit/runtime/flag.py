"""A one-way event cheap enough for every session to hold several."""

from __future__ import annotations

import anyio

__all__ = ["Flag"]


class Flag:
    """A one-way event that costs a bool until something waits on it (a session holds two of them)."""

    __slots__ = ("_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: anyio.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if not self._set:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
