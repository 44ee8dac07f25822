"""How `mcpkit` client commands reach a server: targets told apart, HTTP headers, roots, server logs on
stderr at --log-level, and --timeout against a silent server. Each bad input: its one line and exit code."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import peers

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = str(Path(__file__).with_name("client_server.py"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = peers.free_port()
    with peers.server_process([sys.executable, SERVER_FILE, "--http", str(port)], port, ENV):
        yield f"http://127.0.0.1:{port}/mcp"


def test_headers_reach_an_http_server(http_url: str) -> None:
    done = mcpkit(
        "call", http_url, "header", "name=X-Api-Key", "--header", "X-Api-Key: s3cret", "--header", "A:b"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "s3cret\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--header", "no colon"),
            "mcpkit: --header 'no colon' is not NAME:VALUE (e.g. --header 'X-Api-Key: abc')",
        ),
        (
            ("--header", "bad name: x"),
            "mcpkit: --header 'bad name: x' is not NAME:VALUE (e.g. --header 'X-Api-Key: abc')",
        ),
    ],
)
def test_a_bad_header_is_one_line(http_url: str, args: tuple[str, ...], message: str) -> None:
    done = mcpkit("ping", http_url, *args)
    assert (done.returncode, done.stderr.strip()) == (2, message)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "localhost:8000/mcp",
            "mcpkit: 'localhost:8000/mcp' looks like a URL without its scheme: write http://localhost:8000/mcp",
        ),
        (
            "example.com/mcp",
            "mcpkit: 'example.com/mcp' looks like a URL without its scheme: write http://example.com/mcp",
        ),
        (
            "ws://127.0.0.1:1/mcp",
            "mcpkit: 'ws://127.0.0.1:1/mcp': a server URL is http:// or https://, not ws://",
        ),
        ("missing_server.py", "mcpkit: no such file: missing_server.py"),
        (
            "no-such-command --stdio",
            "mcpkit: no such command: 'no-such-command'"
            " (the server is an http(s) URL, a server.py file or a command line)",
        ),
        (
            "'unbalanced",
            'mcpkit: the server command line "\'unbalanced" does not parse: No closing quotation',
        ),
        (SERVER_FILE + " --header", ""),
    ],
    ids=[
        "no-scheme",
        "no-scheme-path",
        "ws",
        "missing-file",
        "missing-command",
        "unbalanced",
        "header-on-stdio",
    ],
)
def test_targets_are_told_apart(target: str, message: str) -> None:
    if not message:  # a header means nothing to a command
        done = mcpkit("ping", SERVER_FILE, "--header", "A: b")
        message = "mcpkit: --header and --auth are for http(s) servers; this server is a command"
    else:
        done = mcpkit("ping", target)
    assert (done.returncode, done.stderr.strip()) == (2, message)


def test_a_py_file_is_run_by_this_python_without_exec_bit() -> None:
    assert not os.access(SERVER_FILE, os.X_OK)
    assert mcpkit("ping", SERVER_FILE).stdout == "pong\n"


def test_roots_are_offered_as_file_uris(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    everything = str(ROOT / "examples" / "everything.py")
    done = mcpkit(
        "call", everything, "list_client_roots", "--json", "--roots", str(tmp_path / "a"), str(ROOT)
    )
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"]["result"] == [
        (tmp_path / "a").as_uri(),
        ROOT.as_uri(),
    ]
    missing = mcpkit("ping", everything, "--roots", str(tmp_path / "nope"))
    assert (missing.returncode, missing.stderr.strip()) == (
        2,
        f"mcpkit: --roots: no such directory: {tmp_path / 'nope'}",
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_logs_are_shown_on_stderr_from_the_level_asked(transport: str, http_url: str) -> None:
    target = SERVER_FILE if transport == "stdio" else http_url
    shown = mcpkit("call", target, "chatter")
    assert shown.stdout == "chattered\n"
    assert shown.stderr.splitlines() == ["[info chatter] a info line", "[error chatter] a error line"]
    everything = mcpkit("call", target, "chatter", "--log-level", "debug").stderr.splitlines()
    assert everything[0] == "[debug chatter] a debug line" and len(everything) == 3
    assert mcpkit("call", target, "chatter", "--log-level", "error").stderr.splitlines() == [
        "[error chatter] a error line"
    ]


@pytest.mark.parametrize(
    "silent",
    ["import sys; sys.stdin.read()", "import time; time.sleep(60)"],
    ids=["reads-stdin", "ignores-stdin"],
)
def test_timeout_ends_a_silent_server_and_says_so(silent: str) -> None:
    done = mcpkit("ping", f"{sys.executable} -c '{silent}'", "--timeout", "1")
    assert (done.returncode, done.stderr.strip()) == (
        3,
        "mcpkit: timeout: the server did not answer within --timeout 1s",
    )
