"""`mcpkit serve` and the client commands checking what they are given before they start (issue 31,
items 4, 6, 10, 14): ports, timeouts, HTTP-only options, Redis URLs, one line after the bind, a port in
use, stdio at a terminal, and which logs show by default."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pexpect
import pytest

import peers

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
SERVER = """from mcpkit import Server
from mcpkit.server.middleware import RequestLog

server = Server("plain")
server.middleware.add(RequestLog())


@server.tool()
def hi() -> str:
    return "hi"
"""


@pytest.fixture
def plain(tmp_path: Path) -> str:
    path = tmp_path / "plain.py"
    path.write_text(SERVER)
    return str(path)


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


def last_line(done: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    return done.returncode, done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("serve", "{f}", "--http", "--port", "70000"), "argument --port: 70000 is not a TCP port (1-65535)"),
        (("proxy", "{f}", "--port", "65536"), "argument --port: 65536 is not a TCP port (1-65535)"),
        (("ping", "{f}", "--timeout", "-1"), "argument --timeout: -1 is not a positive number of seconds"),
        (("tasks", "{f}", "--timeout", "0"), "argument --timeout: 0 is not a positive number of seconds"),
        (("ping", "{f}", "--timeout", "nan"), "argument --timeout: nan is not a positive number of seconds"),
    ],
)
def test_ports_and_timeouts_are_checked_up_front(plain: str, args: tuple[str, ...], line: str) -> None:
    code, said = last_line(mcpkit(*(a.format(f=plain) for a in args)))
    assert code == 2 and said.endswith(f": error: {line}")


def test_a_url_with_a_port_out_of_range_is_one_line() -> None:
    done = mcpkit("ping", "http://127.0.0.1:70000/mcp")
    assert (done.returncode, done.stderr) == (
        2,
        "mcpkit: 'http://127.0.0.1:70000/mcp' is not a usable URL: Port out of range 0-65535\n",
    )


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (("--port", "8001"), "mcpkit: --port needs --http (without it the server speaks stdio)\n"),
        (
            ("--host", "0.0.0.0", "--reload"),
            "mcpkit: --host, --reload need --http (without it the server speaks stdio)\n",
        ),
    ],
)
def test_http_options_without_http_are_refused(plain: str, extra: tuple[str, ...], line: str) -> None:
    done = mcpkit("serve", plain, *extra)
    assert (done.returncode, done.stderr) == (2, line)


def test_a_redis_option_that_is_not_a_url_is_one_line(plain: str) -> None:
    done = mcpkit("serve", plain, "--http", "--workers", "2", "--redis", "notaurl")
    expected = (
        "mcpkit: --redis 'notaurl' is not a Redis URL (redis://HOST[:PORT][/DB], rediss://, unix:// or "
        "redis+sentinel://HOST:PORT[,HOST:PORT...]/SERVICE[/DB])\n"
    )
    assert (done.returncode, done.stderr) == (2, expected)


def test_a_redis_that_does_not_answer_is_one_line(plain: str) -> None:
    port = peers.free_port()
    done = mcpkit("serve", plain, "--http", "--redis", f"redis://127.0.0.1:{port}")
    assert done.returncode == 3
    assert done.stderr.startswith(f"mcpkit: cannot reach Redis at redis://127.0.0.1:{port}: ")
    assert len(done.stderr.splitlines()) == 1


def test_sentinels_that_do_not_answer_are_one_line_without_the_password(plain: str) -> None:
    port = peers.free_port()
    done = mcpkit("serve", plain, "--http", "--redis", f"redis+sentinel://:pw@127.0.0.1:{port}/mymaster")
    assert done.returncode == 3
    assert done.stderr.startswith(
        f"mcpkit: cannot reach Redis at redis+sentinel://***@127.0.0.1:{port}/mymaster: "
    )
    assert len(done.stderr.splitlines()) == 1 and "pw" not in done.stderr
    clustered = mcpkit("serve", plain, "--http", "--redis-cluster", f"redis+sentinel://127.0.0.1:{port}/m")
    line = "mcpkit: --redis-cluster takes a node's redis:// URL; a Sentinel URL goes to --redis\n"
    assert (clustered.returncode, clustered.stderr) == (2, line)


def test_serving_is_announced_in_one_line_once_bound_and_requests_are_logged(plain: str) -> None:
    port = peers.free_port()
    command = [sys.executable, "-m", "mcpkit", "serve", plain, "--http", "--port", str(port)]
    child = subprocess.Popen(command, env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stderr is not None
        assert child.stderr.readline() == f"mcpkit: serving on http://127.0.0.1:{port}/mcp\n"
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            pass  # bound and listening by the time the line is read
        listed = mcpkit("list", f"http://127.0.0.1:{port}/mcp", "--json")
        assert listed.returncode == 0, listed.stderr
    finally:
        child.terminate()
        child.wait(20)
    rest = child.stderr.read().splitlines()
    assert all(line.startswith("INFO mcpkit.requests: ") for line in rest), rest  # nothing from uvicorn
    assert any("tools/list -> ok" in line for line in rest)


def test_a_port_in_use_is_one_line(plain: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit("serve", plain, "--http", "--port", str(port))
    assert (done.returncode, done.stderr) == (
        3,
        f"mcpkit: cannot listen on 127.0.0.1:{port}: the port is in use: stop what is there, or pick another "
        "--port\n",
    )


def test_a_proxy_on_a_port_in_use_is_one_line(plain: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit("proxy", plain, "--http", "--port", str(port))
    assert (done.returncode, done.stderr) == (
        3,
        f"mcpkit: cannot listen on 127.0.0.1:{port}: the port is in use: stop what is there, or pick another "
        "--port\n",
    )


def test_stdio_serve_at_a_terminal_says_it_waits_on_stdin(plain: str) -> None:
    child = pexpect.spawn(
        sys.executable, ["-m", "mcpkit", "serve", plain], env=ENV, encoding="utf-8", timeout=30
    )
    child.expect_exact(f"mcpkit: serving {plain} over stdio: waiting for a client on stdin (Ctrl-C to stop).")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_one_process_seals_request_state_without_the_several_processes_warning(tmp_path: Path) -> None:
    path = tmp_path / "asks.py"
    path.write_text(
        "from mcpkit import Server\nfrom mcpkit.server import Context\n\nserver = Server('asks')\n\n\n"
        "@server.tool()\nasync def ask(ctx: Context) -> str:\n"
        "    schema = {'type': 'object', 'properties': {'n': {'type': 'string'}}}\n"
        "    answer = await ctx.elicit('Name?', schema)\n"
        "    return str(answer)\n"
    )
    port = peers.free_port()
    command = [sys.executable, "-m", "mcpkit", "serve", str(path), "--http", "--port", str(port)]
    child = subprocess.Popen(command, env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stderr is not None
        child.stderr.readline()
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit", "call", f"http://127.0.0.1:{port}/mcp", "ask"],
            input="Ann\ny\n",
            capture_output=True,
            text=True,
            env=ENV,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    finally:
        child.terminate()
        child.wait(20)
    assert "requestState" not in child.stderr.read()


def test_http_answers_once_announced(plain: str) -> None:
    port = peers.free_port()
    command = [sys.executable, "-m", "mcpkit", "serve", plain, "--http", "--port", str(port)]
    child = subprocess.Popen(command, env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stderr is not None
        child.stderr.readline()
        answered = httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=10)
        assert answered.status_code in (400, 405, 406)
    finally:
        child.terminate()
        child.wait(20)
