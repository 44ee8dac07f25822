"""The install story (issue 19), as a new user meets it: the wheel built from this tree, installed with pip
into a fresh venv. Without extras, stdio serves and calls and HTTP is one line naming the extra; with [http],
the commerce example serves over HTTP and the tour's call works. And scripts/serve's connect line works as
printed. Slow-ish (a wheel build and two pip installs), and run in CI like every test."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import peers

ROOT = Path(__file__).resolve().parents[2]
COMMERCE = ROOT / "examples" / "commerce" / "server.py"
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
pytestmark = pytest.mark.slow


def run(*command: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, env=CLEAN_ENV, cwd=cwd, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(a fresh venv's bin/, a working directory outside the checkout), the wheel installed without extras."""
    work = tmp_path_factory.mktemp("install")
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist", ROOT, cwd=work)
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("mcpkit-*.whl")
    venv.create(work / "venv", with_pip=True)
    bin_dir = work / "venv" / "bin"
    done = run(bin_dir / "python", "-m", "pip", "install", "-q", wheel, cwd=work)
    assert done.returncode == 0, done.stderr
    (work / "x.py").write_text("from mcpkit import Server\n\nserver = Server('x')\n")
    yield bin_dir, work


def test_without_extras_http_is_one_line_naming_the_extra(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    serve = run(bin_dir / "mcpkit", "serve", "x.py", "--http", cwd=work, timeout=60)
    assert (serve.returncode, serve.stdout, serve.stderr) == (
        2,
        "",
        "mcpkit: this needs the http extra: pip install 'mcpkit[http]' (No module named 'uvicorn')\n",
    )
    call = run(bin_dir / "mcpkit", "call", "http://127.0.0.1:9/mcp", "add", cwd=work, timeout=60)
    assert (call.returncode, call.stderr) == (
        2,
        "mcpkit: this needs the http extra: pip install 'mcpkit[http]' (No module named 'httpx')\n",
    )


def test_without_extras_stdio_serves_and_calls(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    server = f"{bin_dir / 'mcpkit'} serve {COMMERCE} -- --db {work / 'stdio.db'}"
    done = run(bin_dir / "mcpkit", "call", server, "check_inventory", "sku=COF-ETH-250", "--json", cwd=work)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"]["sku"] == "COF-ETH-250"


def test_with_the_http_extra_the_commerce_server_answers_a_call(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    (wheel,) = (work / "dist").glob("mcpkit-*.whl")
    done = run(bin_dir / "python", "-m", "pip", "install", "-q", f"{wheel}[http]", cwd=work)
    assert done.returncode == 0, done.stderr
    port = peers.free_port()
    command = [str(bin_dir / "mcpkit"), "serve", str(COMMERCE), "--http", "--port", str(port)]
    command += ["--", "--db", str(work / "http.db")]
    with peers.server_process(command, port, env={"PYTHONPATH": ""}):
        url = f"http://127.0.0.1:{port}/mcp"
        call = run(bin_dir / "mcpkit", "call", url, "check_inventory", "sku=COF-ETH-250", "--json", cwd=work)
        assert call.returncode == 0, call.stderr
        assert orjson.loads(call.stdout)["structuredContent"]["sku"] == "COF-ETH-250"
        listed = run(bin_dir / "mcpkit", "list", url, cwd=work)
        assert listed.returncode == 0 and "update_stock" in listed.stdout


def wait_for_port(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, "scripts/serve did not listen"
            time.sleep(0.1)


def test_scripts_serve_prints_a_connect_line_that_works_as_printed(tmp_path: Path) -> None:
    """From another directory too: the line names the venv's mcpkit by a path that works from there."""
    port = peers.free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COMMERCE_DB": str(tmp_path / "shop.db")}
    server = subprocess.Popen(
        [ROOT / "scripts" / "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        lines = iter(server.stderr.readline, "")
        next(line for line in lines if line.startswith("Try it from another shell"))
        printed = next(lines).strip()
        wait_for_port(port, server)
        assert printed.endswith(f"call http://127.0.0.1:{port}/mcp check_inventory sku=COF-ETH-250")
        done = subprocess.run(
            printed, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (printed, done.stderr)
        assert "COF-ETH-250" in done.stdout
        assert shlex.split(printed)[0] == str(
            ROOT / ".venv" / "bin" / "mcpkit"
        )  # outside the checkout: absolute
    finally:
        server.terminate()
        server.wait(10)
