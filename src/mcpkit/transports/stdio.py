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
from typing import TYPE_CHECKING, Any

import anyio

from ..protocol.framing import DEFAULT_MAX_LINE, LineReader, Oversized
from ..runtime._native import running_loop
from ..runtime.groups import single_error
from ..runtime.stream import Attributes, Deliver, Inbound, Outgoing, StreamAttribute
from .pipes import CHUNK, HIGH_WATER, Outbox, ThreadWriter, gated, loop_reader, loop_writer, thread_read

if TYPE_CHECKING:  # anyio.abc loads much of anyio: only for annotations here
    import anyio.abc

__all__ = ["LineStream", "run_stdio", "serve_stdio", "spawn"]

DEFAULT_EOF_GRACE = 5.0


class LineStream(Attributes):
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

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        return {StreamAttribute.eof_grace: lambda: self.eof_grace}

    async def deliver_to(self, deliver: Deliver) -> None:
        lines, read_chunk, reader = self._lines, self._read_chunk, self._reader
        while True:
            while lines:
                await deliver(Inbound(lines.popleft()))
            chunk = await read_chunk()
            if not chunk:
                return
            lines.extend(reader.feed(chunk))

    async def send(self, out: Outgoing) -> None:
        if self._write_line is not None:
            await self._write_line(out.data)
        else:
            await self._write(out.data + b"\n")

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()


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
    max_write_buffer: int = HIGH_WATER,
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
    fast = running_loop() is not None
    read_chunk = (await loop_reader(0) if fast else None) or functools.partial(thread_read, 0)
    writer = await loop_writer(out_fd, max_write_buffer) if fast else None
    if writer is not None:
        stream = LineStream(
            gated(read_chunk, writer.drained),
            writer.write,
            max_line=max_line,
            write_line=writer.write_line,
            eof_grace=eof_grace,
        )
    else:
        slow = ThreadWriter(out_fd, max_write_buffer)
        stream = LineStream(
            gated(read_chunk, slow.drained), slow.write, max_line=max_line, eof_grace=eof_grace
        )
    if fast:
        await _serve_native(serve, stream)
        return
    async with anyio.create_task_group() as tg:
        tg.start_soon(_cancel_on_sigterm, tg.cancel_scope)
        await serve(stream)
        tg.cancel_scope.cancel()


def run_stdio(target: Any, **options: Any) -> None:
    """`serve_stdio` in a new asyncio event loop: `asyncio.run`, since `anyio.run` loads anyio's
    asyncio backend (~8 ms of a server's start) that nothing on the stdio path needs before then."""
    asyncio.run(serve_stdio(target, **options))


async def _serve_native(serve: Callable[[LineStream], Awaitable[None]], stream: LineStream) -> None:
    """Serve until done, or until SIGTERM or SIGINT cancels the serving task (asyncio only)."""
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    assert task is not None
    signalled: list[int] = []
    installed: list[int] = []

    def stop(signum: int) -> None:
        if not signalled:
            signalled.append(signum)
            task.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop, sig)
            installed.append(sig)
        except (NotImplementedError, ValueError, RuntimeError):  # off the main thread / this platform
            pass
    try:
        await serve(stream)
    except asyncio.CancelledError:
        if not signalled or task.uncancel() > 0:  # a cancellation of ours ends serving quietly
            raise
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


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
    start_new_session: bool = False,
) -> AsyncIterator[LineStream]:
    """Start a server process and talk to it over its stdin/stdout.

    On exit, stdin is closed; the process gets `shutdown_timeout` seconds to leave, then SIGTERM,
    then SIGKILL (transports "stdio", shutdown). `start_new_session`: the server is out of the
    terminal's process group, so a Ctrl-C there reaches only this process, which stops the server.
    """
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=start_new_session,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def read_chunk() -> bytes:
        try:
            return await stdout.receive(CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    # asyncio's pipe takes a whole message at once; elsewhere (trio) one task writes, see Outbox
    outbox = Outbox(stdin) if running_loop() is None else None
    stream = LineStream(read_chunk, outbox.write if outbox else stdin.send, max_line=max_line)
    stream.process = process  # type: ignore[attr-defined]
    try:
        if outbox is None:
            yield stream
        else:
            with single_error():
                async with anyio.create_task_group() as tg:
                    tg.start_soon(outbox.pump)
                    yield stream
                    tg.cancel_scope.cancel()
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
