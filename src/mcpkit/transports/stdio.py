"""stdio: serve on this process's stdin/stdout, or spawn a server as a child process.

Spec: transports "stdio". The server MUST NOT write anything to stdout that is not a valid MCP
message, so `serve_stdio` moves the real stdout aside: fd 1 (what `print()` and child processes
write to) then points at stderr, and only the protocol writes to the saved descriptor.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import stat
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from ..protocol.framing import DEFAULT_MAX_LINE, LineReader, Oversized
from ..runtime.stream import Outgoing

__all__ = ["LineStream", "serve_stdio", "spawn"]

_CHUNK = 1 << 16
_HIGH_WATER = 1 << 20
DEFAULT_EOF_GRACE = 5.0


class LineStream:
    """A MessageStream of newline-delimited messages over any pair of read/write callables.

    `write_line`, when given, writes a message and its newline itself (sparing a copy of the message);
    otherwise `write` gets the message with the newline appended. `eof_grace` is how long a Session
    lets requests it has read finish once the input ends (the output may still be open).
    """

    def __init__(
        self,
        read_chunk: Callable[[], Awaitable[bytes]],
        write: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]] | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        write_line: Callable[[bytes], Awaitable[None]] | None = None,
        eof_grace: float = 0.0,
    ) -> None:
        self.eof_grace = eof_grace
        self._read_chunk = read_chunk
        self._write = write
        self._write_line = write_line
        self._close = close
        self._reader = LineReader(max_line)
        self._lines: deque[bytes | bytearray | Oversized] = deque()
        self._eof = False

    async def receive(self) -> bytes | bytearray | Oversized:
        while not self._lines:
            if self._eof:
                raise anyio.EndOfStream
            chunk = await self._read_chunk()
            if not chunk:
                self._eof = True
                continue
            self._lines.extend(self._reader.feed(chunk))
        return self._lines.popleft()

    async def send(self, out: Outgoing) -> None:
        if self._write_line is not None:
            await self._write_line(out.data)
        else:
            await self._write(out.data + b"\n")

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()


class _PipeWriter:
    """Writes through the event loop's own pipe transport, waiting while its buffer is over `high_water`.

    The first message of a loop turn goes out at once (a lone reply waits for nothing); the ones that
    follow in the same turn are joined into one write at the end of it (pipelined replies), or as soon
    as they add up to `high_water`, so a writer that never yields cannot pile them up unbounded.
    """

    def __init__(
        self, transport: asyncio.WriteTransport, protocol: _WriteProtocol, high_water: int = _HIGH_WATER
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._high_water = high_water
        transport.set_write_buffer_limits(high=high_water)
        self._pending: list[bytes] = []
        self._size = 0
        self._batching = False

    async def write(self, data: bytes) -> None:
        await self._put(data)

    async def write_line(self, data: bytes) -> None:
        await self._put(data, b"\n")

    async def _put(self, *pieces: bytes) -> None:
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
            for piece in pieces:
                transport.write(piece)
        await self._protocol.drained()

    async def drained(self) -> None:
        """Return once the output buffer is under its high-water mark (or the pipe is gone)."""
        await self._protocol.drained()

    def _flush(self) -> None:
        self._batching = False
        pending, self._pending = self._pending, []
        size, self._size = self._size, 0
        if not pending or self._transport.is_closing():
            return
        if size > _CHUNK:  # large messages: a copy costs more than a few more syscalls
            for piece in pending:
                self._transport.write(piece)
        else:
            self._transport.write(b"".join(pending))


class _WriteProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self._paused = False
        self._waiters: list[asyncio.Future[None]] = []

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    def connection_lost(self, exc: Exception | None) -> None:
        self.resume_writing()

    async def drained(self) -> None:
        if self._paused:
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
        if self._size > _HIGH_WATER and self._transport is not None:
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
        if self._paused and self._size <= _HIGH_WATER // 2 and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return chunk


def _pollable(fd: int) -> bool:
    """Pipes, sockets and ttys; not regular files or /dev/null, which epoll refuses."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


async def _loop_reader(fd: int) -> Callable[[], Awaitable[bytes]] | None:
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


async def _loop_writer(fd: int, high_water: int) -> _PipeWriter | None:
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
    return _PipeWriter(transport, protocol, high_water)


async def _thread_read(fd: int) -> bytes:
    return await anyio.to_thread.run_sync(os.read, fd, _CHUNK, abandon_on_cancel=True)


class _ThreadWriter:
    """Blocking writes on a worker thread, one message at a time; `drained` waits while more than
    `high_water` bytes are queued behind the lock, so readers can hold off new work meanwhile."""

    def __init__(self, fd: int, high_water: int = _HIGH_WATER) -> None:
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


def _gated(
    read_chunk: Callable[[], Awaitable[bytes]], drained: Callable[[], Awaitable[None]]
) -> Callable[[], Awaitable[bytes]]:
    """Read no more input while the output is backed up: each request read may add a response to a
    peer that is not taking them, so the backlog of work stays bounded too."""

    async def read() -> bytes:
        await drained()
        return await read_chunk()

    return read


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _protect_stdout() -> int:
    """Move the real stdout to a new descriptor and point fd 1 (and sys.stdout) at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


async def serve_stdio(
    target: Any,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    eof_grace: float = DEFAULT_EOF_GRACE,
    max_write_buffer: int = _HIGH_WATER,
) -> None:
    """Serve on stdin/stdout until stdin reaches EOF or SIGTERM arrives.

    Spec: transports "stdio", shutdown: the client closes the server's stdin first and waits for it to
    exit, so requests read before the EOF are still answered (for up to `eof_grace` seconds).

    Output the client has not read yet is held up to about `max_write_buffer` bytes: past it, writers
    wait, and no more input is read until the client catches up.

    `target` is anything with an async `serve(stream)` method (a Server), or that coroutine function itself.
    """
    serve: Callable[[LineStream], Awaitable[None]] = getattr(target, "serve", target)
    out_fd = _protect_stdout()
    fast = _on_asyncio()
    read_chunk = (await _loop_reader(0) if fast else None) or functools.partial(_thread_read, 0)
    writer = await _loop_writer(out_fd, max_write_buffer) if fast else None
    if writer is not None:
        stream = LineStream(
            _gated(read_chunk, writer.drained),
            writer.write,
            max_line=max_line,
            write_line=writer.write_line,
            eof_grace=eof_grace,
        )
    else:
        slow = _ThreadWriter(out_fd, max_write_buffer)
        stream = LineStream(
            _gated(read_chunk, slow.drained), slow.write, max_line=max_line, eof_grace=eof_grace
        )
    async with anyio.create_task_group() as tg:
        tg.start_soon(_cancel_on_sigterm, tg.cancel_scope)
        await serve(stream)
        tg.cancel_scope.cancel()


async def _cancel_on_sigterm(scope: anyio.CancelScope) -> None:
    try:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                scope.cancel()
                return
    except (NotImplementedError, ValueError):  # no signals off the main thread / on this platform
        await anyio.sleep_forever()


@asynccontextmanager
async def spawn(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stderr: Any = None,
    max_line: int = DEFAULT_MAX_LINE,
    shutdown_timeout: float = 2.0,
) -> AsyncIterator[LineStream]:
    """Start a server process and talk to it over its stdin/stdout.

    On exit, stdin is closed; the process gets `shutdown_timeout` seconds to leave, then SIGTERM,
    then SIGKILL (transports "stdio", shutdown).
    """
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def read_chunk() -> bytes:
        try:
            return await stdout.receive(_CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    async def write(data: bytes) -> None:
        await stdin.send(data)

    stream = LineStream(read_chunk, write, max_line=max_line)
    stream.process = process  # type: ignore[attr-defined]
    try:
        yield stream
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, shutdown_timeout)


async def _stop(process: anyio.abc.Process, timeout: float) -> None:
    try:
        if process.stdin is not None:
            await process.stdin.aclose()
    except (anyio.BrokenResourceError, OSError):
        pass
    for step in (None, process.terminate, process.kill):
        if step is not None:
            try:
                step()
            except ProcessLookupError:
                break
        with anyio.move_on_after(timeout):
            await process.wait()
            break
    if process.stdout is not None:
        await process.stdout.aclose()
