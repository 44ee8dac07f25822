"""A bounded one-reader queue with no checkpoints on its fast path (what the HTTP server hands messages on).

anyio's memory object streams yield to the event loop on every send and receive (a full loop turn each)
and build a waiter event per wait; a message crossing a Streamable HTTP POST met four of them. A Mailbox
puts and gets without yielding while it has room or items, and allocates an event only to wait.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import anyio

from ._native import Loop, running_loop

__all__ = ["Mailbox"]

T = TypeVar("T")


class Mailbox(Generic[T]):
    """Items in order from any number of writers to one reader.

    `close()` ends it from the writers' side: the reader gets what is left, then the end. `discard()`
    ends it from the reader's side: later puts return False and buffered items are dropped.
    """

    __slots__ = ("_items", "_limit", "_readable", "_writable", "closed", "discarded")

    def __init__(self, limit: int) -> None:
        self._items: list[T] = []  # short; an empty deque is a 760-byte block, an empty list 56 bytes
        self._limit = limit
        self._readable: _Waiter | None = None
        self._writable: anyio.Event | None = None  # shared by every waiting writer (a rare wait)
        self.closed = False
        self.discarded = False

    async def put(self, item: T) -> bool:
        """Add `item`, waiting while the mailbox is full; False if it was closed or discarded."""
        while len(self._items) >= self._limit and not (self.closed or self.discarded):
            if self._writable is None:
                self._writable = anyio.Event()
            await self._writable.wait()
        if self.closed or self.discarded:
            return False
        self._items.append(item)
        self._wake_reader()
        return True

    async def get(self) -> T:
        """The next item; raise anyio.EndOfStream once the mailbox is closed (or discarded) and empty."""
        while not self._items:
            if self.closed or self.discarded:
                raise anyio.EndOfStream
            waiter = self._readable = _waiter()
            await waiter.wait()
        item = self._items.pop(0)
        self._wake_writers()
        return item

    def take_ready(self) -> list[T]:
        """Every item waiting to be read, without waiting for more."""
        items, self._items = self._items, []
        self._wake_writers()
        return items

    @property
    def reader_waiting(self) -> bool:
        """The reader waits on an empty mailbox (and no put has woken it yet)."""
        return self._readable is not None

    def __len__(self) -> int:
        """The items waiting to be read."""
        return len(self._items)

    def close(self) -> None:
        self.closed = True
        self._wake_reader()
        self._wake_writers()

    def discard(self) -> None:
        self.discarded = True
        self._items.clear()
        self._wake_reader()
        self._wake_writers()

    def _wake_reader(self) -> None:
        if self._readable is not None:
            self._readable.set()
            self._readable = None

    def _wake_writers(self) -> None:
        if self._writable is not None:
            self._writable.set()
            self._writable = None

    def __aiter__(self) -> Mailbox[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.get()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _Future:
    """The reader's one-shot wake-up on asyncio: a bare loop future (an anyio.Event is three objects and a
    deque, and a wait through it two more coroutine frames)."""

    __slots__ = ("_future",)

    def __init__(self, loop: Loop) -> None:
        self._future = loop.create_future()

    def set(self) -> None:
        if not self._future.done():
            self._future.set_result(None)

    async def wait(self) -> None:
        await self._future  # one reader only: its cancellation cancels nobody else's wait


_Waiter = _Future | anyio.Event


def _waiter() -> _Waiter:
    loop = running_loop()
    return _Future(loop) if loop is not None else anyio.Event()
