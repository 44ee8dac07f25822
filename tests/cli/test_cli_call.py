"""`mcpkit call` arguments: optional list and object parameters as JSON values in key=value, their
mistakes refused in one line; and --timeout against an HTTP server that accepts and never answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = str(Path(__file__).with_name("client_server.py"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


def test_optional_list_and_object_parameters_take_json_values() -> None:
    done = mcpkit("call", SERVER_FILE, "tagged", "name=42", 'tags=["a", "b"]', 'meta={"k": 1}')
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout) == {"name": "42", "tags": ["a", "b"], "meta": {"k": 1}}
    left_out = mcpkit("call", SERVER_FILE, "tagged", "name=x", "tags=null")
    assert orjson.loads(left_out.stdout) == {"name": "x", "tags": None, "meta": None}


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        (
            "tags=a,b",
            """mcpkit: argument 'tags' takes a JSON array, e.g. tags='["a", "b"]' (got not JSON: """,
        ),
        (
            "meta=[1]",
            """mcpkit: argument 'meta' takes a JSON object, e.g. meta='{"name": 1}' (got a JSON array)""",
        ),
        ("nmae=x", "mcpkit: the tool has no argument 'nmae' (did you mean name?)"),
        ("name", "mcpkit: argument 'name' is not key=value"),
    ],
)
def test_a_bad_argument_is_one_line(pair: str, message: str) -> None:
    done = mcpkit("call", SERVER_FILE, "tagged", pair)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(message)


@pytest.fixture
def silent_http() -> Iterator[str]:
    """A TCP server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        listener.close()


def test_timeout_ends_a_silent_http_server_and_says_so(silent_http: str) -> None:
    done = mcpkit("ping", silent_http, "--timeout", "1")
    assert (done.returncode, done.stderr.strip()) == (
        3,
        "mcpkit: timeout: the server did not answer within --timeout 1s",
    )
