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
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from ..protocol.framing import DEFAULT_MAX_LINE, LineReader, Oversized
from ..protocol.jsonrpc import RequestId

__all__ = ["LineStream", "serve_stdio", "spawn"]

_CHUNK = 1 << 16
_HIGH_WATER = 1 << 20


class LineStream:
    """A MessageStream of newline-delimited messages over any pair of read/write callables."""

    def __init__(
        self,
        read_chunk: Callable[[], Awaitable[bytes]],
        write: Callable[[bytes], Awaitable[None]],
        close: Callable[[], Awaitable[None]] | None = None,
        max_line: int = DEFAULT_MAX_LINE,
    ) -> None:
        self._read_chunk = read_chunk
        self._write = write
        self._close = close
        self._reader = LineReader(max_line)
        self._lines: deque[bytes | Oversized] = deque()
        self._eof = False

    async def receive(self) -> bytes | Oversized:
        while not self._lines:
            if self._eof:
                raise anyio.EndOfStream
            chunk = await self._read_chunk()
            if not chunk:
                self._eof = True
                continue
            self._lines.extend(self._reader.feed(chunk))
        return self._lines.popleft()

    async def send(self, data: bytes, related: RequestId | None = None) -> None:
        await self._write(data + b"\n")

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()


class _PipeWriter:
    """Writes through the event loop's own pipe transport, coalescing writes made in one loop turn."""

    def __init__(self, transport: asyncio.WriteTransport, protocol: _WriteProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._pending: list[bytes] = []

    async def write(self, data: bytes) -> None:
        if self._transport.is_closing():
            raise anyio.BrokenResourceError
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(data)
        if self._transport.get_write_buffer_size() > _HIGH_WATER:
            await self._protocol.drained()

    def _flush(self) -> None:
        data, self._pending = b"".join(self._pending), []
        if not self._transport.is_closing():
            self._transport.write(data)


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


async def _loop_reader(fd: int) -> Callable[[], Awaitable[bytes]] | None:
    """Read through the event loop itself (pipes, sockets and ttys; not regular files)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    try:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0, closefd=False)
        )
    except (ValueError, OSError):
        os.set_blocking(fd, True)
        return None

    async def read_chunk() -> bytes:
        return await reader.read(_CHUNK)

    return read_chunk


async def _loop_writer(fd: int) -> Callable[[bytes], Awaitable[None]] | None:
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            _WriteProtocol, os.fdopen(fd, "wb", 0, closefd=False)
        )
    except (ValueError, OSError):
        os.set_blocking(fd, True)
        return None
    return _PipeWriter(transport, protocol).write


async def _thread_read(fd: int) -> bytes:
    return await anyio.to_thread.run_sync(os.read, fd, _CHUNK, abandon_on_cancel=True)


def _thread_writer(fd: int) -> Callable[[bytes], Awaitable[None]]:
    lock = anyio.Lock()

    async def write(data: bytes) -> None:
        async with lock:
            view = memoryview(data)
            while view:
                written = await anyio.to_thread.run_sync(os.write, fd, view)
                view = view[written:]

    return write


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


async def serve_stdio(target: Any, *, max_line: int = DEFAULT_MAX_LINE) -> None:
    """Serve on stdin/stdout until stdin reaches EOF or SIGTERM arrives.

    `target` is anything with an async `serve(stream)` method (a Server), or that coroutine function itself.
    """
    serve: Callable[[LineStream], Awaitable[None]] = getattr(target, "serve", target)
    out_fd = _protect_stdout()
    fast = _on_asyncio()
    read_chunk = (await _loop_reader(0) if fast else None) or functools.partial(_thread_read, 0)
    write = (await _loop_writer(out_fd) if fast else None) or _thread_writer(out_fd)
    stream = LineStream(read_chunk, write, max_line=max_line)
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
