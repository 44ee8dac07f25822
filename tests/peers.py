"""Starting real servers for tests: an ASGI app on uvicorn in this process, or a server process."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal

import anyio
import pytest
import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def serving(
    app: Any, path: str = "/mcp", lifespan: Literal["auto", "on", "off"] = "on"
) -> AsyncIterator[str]:
    """`app` on a real uvicorn at a free 127.0.0.1 port; yields the URL of `path`."""
    # asyncio turns Nagle off (TCP_NODELAY) only on a socket whose proto says TCP; a plain socket()
    # says 0, and every response's last write then waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan=lifespan, log_level="critical", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(5):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}{path}"
        finally:
            server.should_exit = True
            server.force_exit = True


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
