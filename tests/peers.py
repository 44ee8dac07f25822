"""Starting real servers for tests: an ASGI app in this process (uvicorn on asyncio, hypercorn on trio), or a
server process."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any, Literal

import anyio
import pytest
import sniffio
import uvicorn

Lifespan = Literal["auto", "on", "off"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def serving(
    app: Any,
    path: str = "/mcp",
    lifespan: Lifespan = "on",
    *,
    port: int = 0,
    graceful: bool = False,
    tls: tuple[str, str] | None = None,
) -> AsyncIterator[str]:
    """`app` on a real server at 127.0.0.1:`port` (a free one unless told), on the running event loop; yields
    the URL of `path`. The one way tests serve an ASGI app in-process.

    Lifespan "off": the app is never told of startup or shutdown (it hosts its own tasks). `graceful`: on
    asyncio, uvicorn runs the lifespan's shutdown at the end (hypercorn, on trio, always does). `tls`: a
    certificate file and its key file, to serve https (asyncio only)."""
    on_trio = sniffio.current_async_library() == "trio"
    if on_trio:
        assert tls is None, "https is served on asyncio only"
        async with _hypercorn(app, lifespan, port) as origin:
            yield origin + path
    else:
        async with _uvicorn(app, lifespan, port, graceful, tls) as origin:
            yield origin + path


@asynccontextmanager
async def _uvicorn(
    app: Any, lifespan: Lifespan, port: int, graceful: bool, tls: tuple[str, str] | None = None
) -> AsyncIterator[str]:
    # asyncio turns Nagle off (TCP_NODELAY) only on a socket whose proto says TCP; a plain socket()
    # says 0, and every response's last write then waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a fixed port a previous test just freed
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    certificate, key = tls or (None, None)
    config = uvicorn.Config(
        app,
        lifespan=lifespan,
        log_level="critical",
        timeout_graceful_shutdown=1,
        ssl_certfile=certificate,
        ssl_keyfile=key,
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(5):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            server.force_exit = not graceful  # a forced exit skips the lifespan's shutdown


@asynccontextmanager
async def _hypercorn(app: Any, lifespan: Lifespan, port: int) -> AsyncIterator[str]:
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.graceful_timeout = 1
    config.loglevel = "CRITICAL"
    stop = anyio.Event()
    served = _lifespan_or_none(app) if lifespan != "off" else _without_lifespan(app)
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(5):
            (origin,) = await tg.start(partial(serve, served, config, shutdown_trigger=stop.wait))
        try:
            yield origin
        finally:
            stop.set()


def _lifespan_or_none(app: Any) -> Any:
    """`app`, failing a lifespan it returns from without a word: hypercorn then goes on without one, as
    uvicorn does (hypercorn would otherwise send startup to a lifespan already over)."""

    async def served(scope: dict[str, Any], receive: Any, send: Any) -> None:
        said: list[Any] = []

        async def noted(message: Any) -> None:
            said.append(message)
            await send(message)

        await app(scope, receive, noted)
        if scope["type"] == "lifespan" and not said:
            raise LookupError("this app has no lifespan")

    return served


def _without_lifespan(app: Any) -> Any:
    """`app` behind a lifespan that completes without telling it (hypercorn always runs one)."""

    async def served(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})

    return served


@contextmanager
def server_process(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    """Run `command` until the end of the block, once it accepts connections on `port` (20 s at most)."""
    process = subprocess.Popen(
        command, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                pytest.fail(f"{command[0]} exited with {process.returncode} before listening")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{' '.join(command)} did not listen within 20 s")
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
