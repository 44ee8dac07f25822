"""Run the inspector: a socket on 127.0.0.1, a fresh token, uvicorn serving the app, and the first
connection made before the page opens (so the page shows the server at once)."""

from __future__ import annotations

import secrets
import socket
import sys
import webbrowser
from collections.abc import Callable
from typing import Any

import anyio

from .app import InspectorApp
from .backend import Backend
from .guard import Guard
from .hub import Hub
from .opening import Target

__all__ = ["bind", "serve"]


def bind(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 only (port 0: any free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def page_url(sock: socket.socket, token: str) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"


async def serve(
    sock: socket.socket,
    target: Target | None,
    *,
    token: str | None = None,
    on_ready: Callable[[str], Any] | None = None,
    open_browser: bool = False,
) -> None:
    """Serve the inspector on `sock` until cancelled (or Ctrl-C); `on_ready(url)` once it listens."""
    import uvicorn

    token = token or secrets.token_urlsafe(32)
    hub = Hub()
    async with anyio.create_task_group() as tg:
        backend = Backend(tg, hub, target)
        app = InspectorApp(backend, hub, Guard(sock.getsockname()[1], token))
        config = uvicorn.Config(
            app, lifespan="off", log_level="warning", timeout_graceful_shutdown=1, ws="none"
        )
        server = uvicorn.Server(config)
        serving = anyio.Event()

        async def run_server() -> None:
            try:
                await server.serve([sock])
            finally:
                serving.set()

        tg.start_soon(run_server)
        if target is not None and target.server:
            try:
                await backend.connect({})
            except Exception as exc:  # shown in the page too; the inspector stays up to try again
                print(f"mcpkit inspect: could not connect to {target.server}: {exc}", file=sys.stderr)
        while not server.started and not serving.is_set():
            await anyio.sleep(0.01)
        url = page_url(sock, token)
        if on_ready is not None and server.started:
            on_ready(url)
        if open_browser and server.started:
            webbrowser.open(url)
        while not server.should_exit and not serving.is_set():
            await anyio.sleep(0.1)
        hub.close()  # open event streams end now, within uvicorn's graceful shutdown
        await backend.disconnect({})
        with anyio.move_on_after(3):
            await serving.wait()
        tg.cancel_scope.cancel()
