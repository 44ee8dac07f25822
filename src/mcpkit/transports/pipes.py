"""Non-blocking pipe I/O for stdio: asyncio read and write protocols on a pollable descriptor (a pipe,
a socket, a terminal), a thread per read or write otherwise (a regular file); writes are buffered up
to a high-water mark past which writers wait, so a peer that reads nothing cannot grow our memory.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # anyio.abc loads much of anyio: only for annotations here
    import anyio.abc

__all__ = [
    "HIGH_WATER",
    "Outbox",
    "PipeWriter",
    "ThreadWriter",
    "gated",
    "loop_reader",
    "loop_writer",
    "thread_read",
]

CHUNK = 1 << 16
HIGH_WATER = 1 << 20


class PipeWriter:
    """Writes through the event loop's own pipe transport, waiting while its buffer is over `high_water`.

    The first message of a loop turn goes out at once (a lone reply waits for nothing); the ones that
    follow in the same turn are joined into one write at the end of it (pipelined replies), or as soon
    as they add up to `high_water`, so a writer that never yields cannot pile them up unbounded.
    """

    def __init__(
        self, transport: asyncio.WriteTransport, protocol: _WriteProtocol, high_water: int = HIGH_WATER
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._high_water = high_water
        transport.set_write_buffer_limits(high=high_water)
        self._pending: list[bytes] = []
        self._size = 0
        self._batching = False

    async def write(self, data: bytes) -> None:
        self._put(data)
        if self._protocol.paused:  # no coroutine of its own per message while the pipe keeps up
            await self._protocol.drained()

    async def write_line(self, data: bytes) -> None:
        self._put(data, b"\n")
        if self._protocol.paused:
            await self._protocol.drained()

    def _put(self, *pieces: bytes) -> None:
        transport = self._transport
        if transport.is_closing():
            raise anyio.BrokenResourceError
        if self._batching:
            self._pending.extend(pieces)
            self._size += len(pieces[0])
            if self._size >= self._high_water:
                self._flush()
        else:
            self._batching = True
            asyncio.get_running_loop().call_soon(self._flush)
            if len(pieces[0]) > CHUNK:  # a large message: two syscalls cost less than its copy
                for piece in pieces:
                    transport.write(piece)
            else:  # one write: the message and its newline apart wake the reader twice (2 syscalls)
                transport.write(b"".join(pieces))

    async def drained(self) -> None:
        """Return once the output buffer is under its high-water mark (or the pipe is gone)."""
        await self._protocol.drained()

    def _flush(self) -> None:
        self._batching = False
        pending, self._pending = self._pending, []
        size, self._size = self._size, 0
        if not pending or self._transport.is_closing():
            return
        if size > CHUNK:  # large messages: a copy costs more than a few more syscalls
            for piece in pending:
                self._transport.write(piece)
        else:
            self._transport.write(b"".join(pending))


class _WriteProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.paused = False
        self._waiters: list[asyncio.Future[None]] = []

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    def connection_lost(self, exc: Exception | None) -> None:
        self.resume_writing()

    async def drained(self) -> None:
        if self.paused:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter


class _ReadProtocol(asyncio.Protocol):
    """Chunks as the loop reads them, handed to one reader; reading pauses while a backlog waits."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._eof = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        if self._size > HIGH_WATER and self._transport is not None:
            self._transport.pause_reading()
            self._paused = True
        self._wake()

    def eof_received(self) -> bool | None:
        self._eof = True
        self._wake()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof_received()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def read_chunk(self) -> bytes:
        while not self._chunks:
            if self._eof:
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        chunk = self._chunks.popleft()
        self._size -= len(chunk)
        if self._paused and self._size <= HIGH_WATER // 2 and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return chunk


def _pollable(fd: int) -> bool:
    """Pipes, sockets and ttys; not regular files or /dev/null, which epoll refuses."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


async def loop_reader(fd: int) -> Callable[[], Awaitable[bytes]] | None:
    """Read through the event loop itself, or None where the loop cannot poll `fd`."""
    if not _pollable(fd):
        return None
    protocol = _ReadProtocol()
    try:
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: protocol, os.fdopen(fd, "rb", 0, closefd=False)
        )
    except (ValueError, OSError):
        os.set_blocking(fd, True)
        return None
    return protocol.read_chunk


async def loop_writer(fd: int, high_water: int) -> PipeWriter | None:
    if not _pollable(fd):
        return None
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            _WriteProtocol, os.fdopen(fd, "wb", 0, closefd=False)
        )
    except (ValueError, OSError):
        os.set_blocking(fd, True)
        return None
    return PipeWriter(transport, protocol, high_water)


async def thread_read(fd: int) -> bytes:
    return await anyio.to_thread.run_sync(os.read, fd, CHUNK, abandon_on_cancel=True)


class ThreadWriter:
    """Blocking writes on a worker thread, one message at a time; `drained` waits while more than
    `high_water` bytes are queued behind the lock, so readers can hold off new work meanwhile."""

    def __init__(self, fd: int, high_water: int = HIGH_WATER) -> None:
        self._fd = fd
        self._high_water = high_water
        self._lock = anyio.Lock()
        self._queued = 0
        self._below: anyio.Event | None = None

    async def write(self, data: bytes) -> None:
        self._queued += len(data)
        try:
            async with self._lock:
                view = memoryview(data)
                while view:
                    written = await anyio.to_thread.run_sync(os.write, self._fd, view)
                    view = view[written:]
        finally:
            self._queued -= len(data)
            if self._below is not None and self._queued <= self._high_water:
                self._below.set()
                self._below = None

    async def drained(self) -> None:
        while self._queued > self._high_water:
            if self._below is None:
                self._below = anyio.Event()
            await self._below.wait()


def gated(
    read_chunk: Callable[[], Awaitable[bytes]], drained: Callable[[], Awaitable[None]]
) -> Callable[[], Awaitable[bytes]]:
    """Read no more input while the output is backed up: each request read may add a response to a
    peer that is not taking them, so the backlog of work stays bounded too."""

    async def read() -> bytes:
        await drained()
        return await read_chunk()

    return read


class Outbox:
    """Whole messages to a byte stream, in order, as asyncio's pipe transport writes them: a writer
    cancelled while its message goes out stops waiting, and the message still goes out whole.

    trio's pipe, cancelled in the middle of a send, has written part of the message; the next one would
    be glued to that part and both lost to the peer. So one task, `pump`, does the writing.
    """

    def __init__(self, stream: anyio.abc.ByteSendStream) -> None:
        self._stream = stream
        self._error: BaseException | None = None
        self._queue: deque[tuple[bytes, anyio.Event]] = deque()
        self._wake = anyio.Event()

    async def write(self, data: bytes) -> None:
        if self._error is not None:
            raise anyio.BrokenResourceError from self._error
        done = anyio.Event()
        self._queue.append((data, done))
        self._wake.set()
        await done.wait()
        if self._error is not None:
            raise anyio.BrokenResourceError from self._error

    async def pump(self) -> None:
        """Write what is queued until cancelled; after a failed write the rest is dropped, its writers
        told so."""
        while True:
            while self._queue:
                data, done = self._queue[0]
                try:
                    if self._error is None:
                        await self._stream.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    self._error = exc
                self._queue.popleft()
                done.set()
            self._wake = anyio.Event()
            await self._wake.wait()
