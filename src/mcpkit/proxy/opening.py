"""open_proxy: connect to a remote MCP server (a stdio command or an HTTP URL, either era) and yield
the Server that re-serves it; serve_proxy: that Server over stdio or Streamable HTTP until stopped."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ..client.connect import connect_http, connect_stdio
from ..runtime.groups import single_error
from ..server.server import Server
from .forward import Proxy

__all__ = ["open_proxy", "serve_proxy"]


def _is_url(target: str | Sequence[str]) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


@asynccontextmanager
async def open_proxy(
    target: str | Sequence[str],
    *,
    name: str | None = None,
    timeout: float | None = 300.0,
    stderr: Any = None,
    **client_options: Any,
) -> AsyncIterator[Server]:
    """The Server fronting `target`: an http(s) URL, a command line (`"npx -y server"`) or its argv.

    `timeout`: how long a forwarded request waits for the remote without progress; `stderr`: where a
    stdio remote's stderr goes (default: this process's); the rest go to the Client (`era`, `headers`
    for a URL, ...)."""
    proxy = Proxy(timeout=timeout)
    options = {**proxy.client_options(), "timeout": 60.0, **client_options}
    if _is_url(target):
        opener = connect_http(str(target), **options)
    else:
        argv = shlex.split(target) if isinstance(target, str) else list(target)
        opener = connect_stdio(argv, stderr=stderr if stderr is not None else subprocess.DEVNULL, **options)
    with single_error():
        async with opener as client, proxy.serving(client, name=name) as server:
            yield server


async def serve_proxy(
    target: str | Sequence[str],
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = 8000,
    app_options: dict[str, Any] | None = None,
    **proxy_options: Any,
) -> None:
    """Re-serve `target` over stdio, or over Streamable HTTP at host:port/mcp, until stopped."""
    async with open_proxy(target, **proxy_options) as server:
        if not http:
            from ..transports.stdio import serve_stdio

            await serve_stdio(server.serve)
            return
        import uvicorn

        from ..transports.http_server import StreamableHTTPApp

        app = StreamableHTTPApp(server, **(app_options or {}))
        config = uvicorn.Config(app, host=host, port=port, lifespan="on", log_level="warning")
        await uvicorn.Server(config).serve()
