"""What the client commands say when the server is not there, not at that path, or wants credentials
(issue 31, items 12 and 17): one line each, in the CLI's terms, and a connection error type for the
library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import peers
from mcpkit import ConnectionFailed, RemoteError, Server
from mcpkit.client import connect_http
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


async def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mcpkit", *args]
    return await anyio.to_thread.run_sync(
        lambda: subprocess.run(command, capture_output=True, text=True, timeout=60, env=ENV)
    )


async def test_a_wrong_path_is_said_once() -> None:
    async with peers.serving(StreamableHTTPApp(Server("s"))) as url:
        wrong = url.replace("/mcp", "/nope")
        done = await mcpkit("ping", wrong)
    assert (done.returncode, done.stderr) == (
        3,
        f"mcpkit: error -32000: HTTP 404 Not Found from {wrong}: no MCP endpoint at this path "
        "(nor is it a 2024-11-05 HTTP+SSE endpoint)\n",
    )


async def wants_a_token(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def test_a_401_gives_the_cli_users_options_not_python() -> None:
    async with peers.serving(wants_a_token) as url:
        done = await mcpkit("ping", url)
    assert done.returncode == 3
    assert done.stderr.endswith(
        f"HTTP 401 Unauthorized from {url}: the server wants credentials (WWW-Authenticate: Bearer); send an "
        "Authorization header, or authorize (pass --header 'Authorization: Bearer TOKEN', or --auth oauth)\n"
    )
    assert "headers=" not in done.stderr


async def test_a_refused_connection_is_a_connection_error() -> None:
    url = f"http://127.0.0.1:{peers.free_port()}/mcp"
    with anyio.fail_after(20), pytest.raises(ConnectionFailed) as caught:
        async with connect_http(url, timeout=5):
            pass
    assert isinstance(caught.value, RemoteError)  # what `except RemoteError` caught before
    assert caught.value.message.startswith(f"cannot connect to {url} (ConnectError:")
    done = await mcpkit("ping", url)
    assert (done.returncode, done.stderr) == (
        3,
        f"mcpkit: cannot connect to {url} (ConnectError: All connection attempts failed); "
        "is the server running?\n",
    )
