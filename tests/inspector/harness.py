"""The inspector as a user starts it (`mcpkit inspect TARGET --no-browser`), and servers for it to inspect."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
HOSTILE = Path(__file__).resolve().parent / "hostile_server.py"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "examples")])}


@dataclass
class Inspector:
    url: str  # the page, with its token
    port: int
    token: str
    process: subprocess.Popen[str]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def act(self, action: str, body: dict[str, Any] | None = None, timeout: float = 30.0) -> httpx.Response:
        return httpx.post(
            f"{self.base}/api/{action}",
            json=body or {},
            headers={"authorization": f"Bearer {self.token}"},
            timeout=timeout,
        )

    def result(self, action: str, body: dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
        response = self.act(action, body, timeout)
        assert response.status_code == 200, response.text
        return response.json()["result"]

    def events(
        self, until: str | Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """The events from the start until one whose JSON contains `until` (or for which it is true)."""
        found: list[dict[str, Any]] = []
        with httpx.stream("GET", f"{self.base}/api/events?token={self.token}", timeout=timeout) as stream:
            deadline = time.monotonic() + timeout
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    found.append(orjson.loads(line[6:]))
                    if until(found[-1]) if callable(until) else until in line:
                        return found
                assert time.monotonic() < deadline, f"no event with {until!r} in {found}"
        raise AssertionError(f"the event stream ended without {until!r}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def inspector(target: str, *extra: str, env: dict[str, str] | None = None) -> Iterator[Inspector]:
    """`mcpkit inspect TARGET --no-browser EXTRA...` running (with `env` added to its environment)."""
    command = [sys.executable, "-m", "mcpkit.cli", "inspect", target, "--no-browser", *extra]
    environment = {**ENV, **(env or {})}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment, cwd=ROOT)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        assert ready, "the inspector printed no URL within 30s"
        line = process.stdout.readline()
        assert "open http" in line, f"the inspector did not start (exit {process.poll()}): {line!r}"
        url = line.split("open ", 1)[1].strip()
        parts = urlsplit(url)
        yield Inspector(url, parts.port or 0, parts.query.removeprefix("token="), process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@contextmanager
def http_server(script: Path = EVERYTHING) -> Iterator[str]:
    """`script --http --port P` started, and its URL once it answers."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(script), "--http", "--port", str(port)], env=ENV)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
