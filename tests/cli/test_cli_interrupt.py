"""Ctrl-C during a call: the `mcpkit` command stops at once with 130 and says it was interrupted."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
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


def test_ctrl_c_at_the_terminal_during_an_http_call_is_one_line_and_130() -> None:
    """Typed at a terminal (a pty: the signal goes to the whole foreground group)."""
    with http_server() as url:
        command = ["-m", "mcpkit.cli", "call", url, "slow", "seconds=20"]
        child = pexpect.spawn(sys.executable, command, env=_env(), encoding="utf-8", timeout=30)
        child.expect_exact("step 1 of 10")  # the bar: the call is in flight
        child.sendintr()
        child.expect(pexpect.EOF)
        child.close()
    screen = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", str(child.before))
    lines = screen.replace("\r", "\n").replace("^C", "").splitlines()  # ^C: the terminal's own echo
    said = [line for line in lines if line.strip() and "━" not in line]
    assert child.exitstatus == 130
    assert said == ["mcpkit: interrupted"]
