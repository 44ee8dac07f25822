"""`mcpkit serve FILE --http --workers N --redis URL` (or `--redis-cluster URL`): worker processes sharing
one port, and one session served by all of them (each call on a new connection, so the kernel hands it
to any worker)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from cluster.parts import free_port, redis_server
from cluster.redis_cluster import redis_cluster
from messages import HEADERS
from peers import server_process

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VERSION = "2025-11-25"


def rpc(rid: int, method: str, params: Mapping[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def test_several_workers_without_redis_is_refused_in_one_line() -> None:
    command = [
        sys.executable,
        "-m",
        "mcpkit.cli",
        "serve",
        str(HERE / "cli_server.py"),
        "--http",
        "--workers",
        "2",
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=30, env={"PYTHONPATH": str(REPO / "src")}
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mcpkit: --workers above 1 needs --redis URL: each worker would know only its own sessions"
    ]


def test_the_serving_line_names_the_redis_without_its_password(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        redis.command("CONFIG", "SET", "requirepass", "hunter2")
        url = f"redis://:hunter2@127.0.0.1:{redis.port}/0"
        port = free_port()
        command = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "cli_server.py"), "--http"]
        command += ["--port", str(port), "--redis", url, "--log-level", "critical"]
        env = {"PYTHONPATH": str(REPO / "src")}
        child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert child.stderr is not None
            line = child.stderr.readline()
            until_listening(port)  # stopped once started: a SIGTERM while starting is not heard
        finally:
            child.terminate()
            child.wait(timeout=30)
    assert "hunter2" not in line and f"sessions in redis://***@127.0.0.1:{redis.port}/0" in line


def test_one_session_is_served_by_every_worker_of_mcpkit_serve(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        assert len(worker_pids(["--redis", redis.url])) == 2  # both workers served the one session


def test_mcpkit_serve_on_a_redis_cluster_serves_one_session_from_every_worker(tmp_path: Path) -> None:
    with redis_cluster(tmp_path) as cluster:
        assert len(worker_pids(["--redis-cluster", cluster.url])) == 2
        stored = [key for node in cluster.nodes for key in node.command("KEYS", "mcp:*")]
    assert any("{" in str(key) for key in stored)  # the session's keys, under their hash tag, on the nodes


def test_redis_and_redis_cluster_together_are_refused_in_one_line() -> None:
    command = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "cli_server.py"), "--http"]
    command += ["--redis", "redis://127.0.0.1:1", "--redis-cluster", "redis://127.0.0.1:2"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=30, env={"PYTHONPATH": str(REPO / "src")}
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["mcpkit: --redis and --redis-cluster: give one of them"]


def until_listening(port: int) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on {port}"
            time.sleep(0.1)


def worker_pids(store: list[str]) -> set[int]:
    """The pids of the workers of `mcpkit serve --workers 2 STORE...` that served calls of one session."""
    port = free_port()
    command = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "cli_server.py"), "--http"]
    command += ["--port", str(port), "--workers", "2", *store]
    pids: set[int] = set()
    with server_process(command, port, {"PYTHONPATH": str(REPO / "src")}):
        url = f"http://127.0.0.1:{port}/mcp"
        fresh = httpx.Limits(max_keepalive_connections=0)  # a new connection, so any worker, each time
        with httpx.Client(limits=fresh, timeout=10) as http:
            info = {"name": "t", "version": "1"}
            init = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": info}
            opened = http.post(url, content=rpc(1, "initialize", init), headers=HEADERS)
            assert opened.status_code == 200
            session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
            session["mcp-protocol-version"] = VERSION

            def call(rid: int) -> int:
                answer = http.post(url, content=rpc(rid, "tools/call", {"name": "pid"}), headers=session)
                assert answer.status_code == 200, answer.text
                data = next(
                    line for line in answer.text.splitlines() if line.startswith("data:") and "result" in line
                )
                return int(json.loads(data[5:])["result"]["structuredContent"]["result"])

            # concurrent calls, each on a new connection: a busy worker leaves the next to the other
            with ThreadPoolExecutor(8) as pool:
                for batch in range(50):
                    pids.update(pool.map(call, range(2 + batch * 8, 10 + batch * 8)))
                    if len(pids) == 2 and batch >= 2:
                        break
    return pids
