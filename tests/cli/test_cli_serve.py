"""`mcpkit serve`, driven as a subprocess: finding the Server, the file's own arguments, the Host/Origin
options, --reload and --log-level (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import orjson
import pytest

import peers
from messages import HEADERS, INITIALIZE

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
COMMERCE = str(ROOT / "examples" / "commerce" / "server.py")
MCPKIT = [sys.executable, "-m", "mcpkit.cli"]


def mcpkit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCPKIT, *args], capture_output=True, text=True, env=ENV, timeout=60, cwd=cwd)


def served(target: str, *extra: str) -> str:
    """The stdio command line that serves `target` with mcpkit serve."""
    return " ".join([*MCPKIT, "serve", target, *extra])


def tool_names(target: str, *extra: str) -> list[str]:
    done = mcpkit("list", served(target, *extra), "--json")
    assert done.returncode == 0, done.stderr
    return [tool["name"] for tool in orjson.loads(done.stdout)]


def server_file(path: Path, body: str) -> str:
    """A file whose servers each have one tool named after what was served."""
    head = "from mcpkit import Server\n\n\ndef made(name):\n    s = Server('t')\n"
    head += "    s.tool(name=name)(lambda: name)\n    return s\n\n\n"
    path.write_text(head + body)
    return str(path)


@pytest.mark.parametrize(
    ("body", "served_name"),
    [
        ("server = made('server')\nmcp = made('mcp')\n", "server"),
        ("mcp = made('mcp')\napp = made('app')\n", "mcp"),
        ("app = made('app')\ndef create_server():\n    return made('factory')\n", "app"),
        ("app = object()  # an ASGI app, say: not a Server\nbuild_server = lambda: made('build')\n", "build"),
        (
            "def create_server():\n    return made('create')\ndef build_server():\n    return made('b')\n",
            "create",
        ),
    ],
)
def test_serve_finds_server_mcp_app_then_a_factory(tmp_path: Path, body: str, served_name: str) -> None:
    assert tool_names(server_file(tmp_path / "s.py", body)) == [served_name]


def test_a_named_object_or_factory_is_served(tmp_path: Path) -> None:
    target = server_file(tmp_path / "s.py", "server = made('server')\ndef other():\n    return made('o')\n")
    assert tool_names(f"{target}:other") == ["o"]


def test_the_words_after_a_double_dash_are_the_files_argv(tmp_path: Path) -> None:
    database = tmp_path / "shop.db"
    command = served(COMMERCE, "--", "--db", str(database))
    done = mcpkit("call", command, "check_inventory", "sku=COF-ETH-250", "--json")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"]["sku"] == "COF-ETH-250"
    assert database.is_file()  # create_server() read --db from its sys.argv


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere.py"], "mcpkit: no such file: nowhere.py"),
        (["no_such_module"], "mcpkit: no module 'no_such_module' (serve a file.py, or a module on the path)"),
        (["s.py:nothing"], "mcpkit: s.py has no attribute 'nothing'"),
        (["s.py:VALUE"], "mcpkit: s.py:VALUE is a int, not a Server (nothing to serve)"),
        (["s.py:needs"], "mcpkit: needs() needs db: give a Server, or a factory taking none"),
        (
            ["empty.py"],
            "mcpkit: empty.py has none of server, mcp, app, create_server(), build_server() "
            "(name the Server as empty.py:NAME; it has shop)",
        ),
        (
            ["s.py", "--reload"],
            "mcpkit: --reload needs --http (without it the server speaks stdio)",
        ),
        (
            ["s.py", "--http", "--workers", "2"],
            "mcpkit: --workers above 1 needs --redis URL: each worker would know only its own sessions",
        ),
    ],
)
def test_what_serve_cannot_serve_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    server_file(tmp_path / "s.py", "VALUE = 3\ndef needs(db):\n    return made('x')\n")
    server_file(tmp_path / "empty.py", "shop = made('shop')\n")
    done = mcpkit("serve", *args, cwd=tmp_path)
    assert (done.returncode, done.stderr.strip()) == (2, message)


@contextmanager
def http_server(*args: str, log: Path) -> Iterator[str]:
    """`mcpkit serve ... --http` on a free port until the block ends; its stderr goes to `log`."""
    port = peers.free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*MCPKIT, "serve", *args, "--http", "--port", str(port)], env=ENV, stderr=sink
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while mcpkit("ping", url).returncode != 0:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_a_foreign_host_or_origin_is_refused_naming_the_option_that_allows_it(tmp_path: Path) -> None:
    target = server_file(tmp_path / "s.py", "server = made('server')\n")
    with http_server(target, log=tmp_path / "log") as url:
        refused = httpx.post(url, json=INITIALIZE, headers={**HEADERS, "Host": "shop.example"})
        assert refused.status_code == 421
        assert refused.json()["error"]["message"] == (
            "Misdirected Request: Host 'shop.example' not allowed (the server allows more with mcpkit serve "
            "--allow-host, or StreamableHTTPApp(allowed_hosts=))"
        )
        origin = {**HEADERS, "Origin": "https://app.example"}
        forbidden = httpx.post(url, json=INITIALIZE, headers=origin)
        assert forbidden.status_code == 403 and "mcpkit serve --allow-origin" in forbidden.text
    allow = (
        "--allow-host",
        "shop.example",
        "--allow-host",
        "api.example",
        "--allow-origin",
        "https://app.example",
    )
    with http_server(target, *allow, log=tmp_path / "log") as url:
        for headers in ({"Host": "shop.example"}, {"Host": "api.example", "Origin": "https://app.example"}):
            answered = httpx.post(url, json=INITIALIZE, headers={**HEADERS, **headers})
            assert answered.status_code == 200, answered.text
        local = httpx.post(url, json=INITIALIZE, headers=HEADERS)  # localhost stays allowed
        assert local.status_code == 200


def test_binding_beyond_localhost_without_allow_host_says_so(tmp_path: Path) -> None:
    target = server_file(tmp_path / "s.py", "server = made('server')\n")
    log = tmp_path / "log"
    with http_server(target, "--host", "0.0.0.0", log=log):
        pass
    assert (
        "mcpkit: bound to 0.0.0.0, but only requests for localhost are answered: add --allow-host NAME for "
        "each name clients use to reach this server"
    ) in log.read_text().splitlines()


def test_log_level_sets_what_the_http_server_logs(tmp_path: Path) -> None:
    target = server_file(tmp_path / "s.py", "server = made('server')\n")
    with http_server(target, "--log-level", "info", log=tmp_path / "info"):
        pass
    with http_server(target, log=tmp_path / "default"):  # mcpkit's one line, not uvicorn's (issue 31)
        pass
    assert "Application startup complete" in (tmp_path / "info").read_text()
    assert "Application startup complete" not in (tmp_path / "default").read_text()


def test_reload_serves_the_changed_file(tmp_path: Path) -> None:
    target = tmp_path / "s.py"
    server_file(target, "server = made('before')\n")
    with http_server(str(target), "--reload", log=tmp_path / "log") as url:
        assert tool_names_at(url) == ["before"]
        server_file(target, "server = made('after')\n")
        deadline = time.monotonic() + 30
        while tool_names_at(url) != ["after"]:
            assert time.monotonic() < deadline, (tmp_path / "log").read_text()
            time.sleep(0.3)


def tool_names_at(url: str) -> list[str]:
    done = mcpkit("list", url, "--json")
    return [tool["name"] for tool in orjson.loads(done.stdout)] if done.returncode == 0 else []


@pytest.mark.parametrize(
    ("target", "split"),
    [
        ("app.py", ("app.py", "")),
        ("app.py:build", ("app.py", "build")),
        ("pkg.mod:server", ("pkg.mod", "server")),
        (r"C:\srv\app.py", (r"C:\srv\app.py", "")),
        (r"C:\srv\app.py:mcp", (r"C:\srv\app.py", "mcp")),
    ],
)
def test_a_target_splits_only_at_a_last_colon_before_a_name(target: str, split: tuple[str, str]) -> None:
    from mcpkit.cli.load import split_target

    assert split_target(target) == split
