"""Ctrl-C during a call: the `mcpkit` command stops at once with 130 and says it was interrupted."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = str(ROOT / "examples" / "everything.py")
ENV_PATH = str(ROOT / "src")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": ENV_PATH}


@contextmanager
def http_server() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "mcpkit.cli", "serve", EVERYTHING, "--http", "--port", str(port)]
    server = subprocess.Popen(command, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the HTTP server did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_ctrl_c_during_a_call_exits_130_saying_interrupted(transport: str) -> None:
    with http_server() as url:
        target = url if transport == "http" else f"{sys.executable} {EVERYTHING}"
        call = subprocess.Popen(
            [sys.executable, "-m", "mcpkit.cli", "call", target, "slow", "seconds=20"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert call.stderr is not None
            assert os.read(call.stderr.fileno(), 1) == b"\r"  # the first progress line: the call is in flight
            call.send_signal(signal.SIGINT)
            _, err = call.communicate(timeout=15)
        finally:
            call.kill()
    assert call.returncode == 130
    assert "unknown command" not in err.decode()
    assert err.decode().strip().endswith("mcpkit: interrupted")
