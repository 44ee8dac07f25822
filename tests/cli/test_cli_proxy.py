"""`mcpkit proxy`: a remote server re-served over stdio and over Streamable HTTP, driven as subprocesses."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from peers import free_port, server_process

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / ".interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PROXY = f"{sys.executable} -m mcpkit.cli proxy"
SERVER = f"{sys.executable} {ROOT / 'examples' / 'everything.py'}"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


def test_a_stdio_server_is_re_served_over_stdio() -> None:
    done = mcpkit("call", f"{PROXY} {shlex.quote(SERVER)}", "add", "a=2", "b=40", "--json")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"] == {"result": 42}


def test_a_stdio_server_is_re_served_over_http_under_another_name() -> None:
    port = free_port()
    command = [*shlex.split(PROXY), SERVER, "--http", "--port", str(port), "--name", "front"]
    with server_process(command, port, ENV):
        done = mcpkit("call", f"http://127.0.0.1:{port}/mcp", "add", "a=20", "b=22", "--json")
        listed = mcpkit("list", f"http://127.0.0.1:{port}/mcp", "prompts", "--json")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"] == {"result": 42}
    assert orjson.loads(done.stdout)["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "front"
    assert listed.returncode == 0 and orjson.loads(listed.stdout)


@pytest.mark.interop
def test_server_everything_over_stdio_is_offered_over_http() -> None:
    if not EVERYTHING.is_file() or shutil.which("node") is None:
        pytest.skip(f"server-everything is not installed at {EVERYTHING}")
    port = free_port()
    command = [*shlex.split(PROXY), f"node {EVERYTHING} stdio", "--http", "--port", str(port)]
    with server_process(command, port, ENV):
        done = mcpkit("call", f"http://127.0.0.1:{port}/mcp", "get-sum", "a=2", "b=3", "--json")
    assert done.returncode == 0, done.stderr
    assert "5" in orjson.loads(done.stdout)["content"][0]["text"]


def test_an_http_server_is_re_served_over_stdio() -> None:
    port = free_port()
    remote = [sys.executable, str(ROOT / "examples" / "everything.py"), "--http", "--port", str(port)]
    with server_process(remote, port, ENV):
        done = mcpkit("call", f"{PROXY} http://127.0.0.1:{port}/mcp", "add", "a=5", "b=6", "--json")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"] == {"result": 11}
