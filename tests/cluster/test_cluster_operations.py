"""`mcpkit serve --http` as an operator runs it (issue 30): SIGTERM drains one process and each of
`--workers N` (readiness 503, the GET stream ends with `retry:`, the call in flight completes, exit 0), and a
Redis that is wrong at start is one line and a non-zero exit."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from cluster.parts import free_port, redis_server
from messages import HEADERS, INITIALIZE, VERSION, body

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def rpc(rid: int, method: str, params: Mapping[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def until(what: str, check: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.05)


@contextmanager
def serve(
    tmp_path: Path, *extra: str, log_name: str = "serve.log"
) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "OPS_STARTED": str(tmp_path / "started"),
        "OPS_RELEASE": str(tmp_path / "release"),
    }
    argv = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "ops_server.py"), "--http"]
    log = tmp_path / log_name
    with log.open("wb") as sink:
        process = subprocess.Popen([*argv, "--port", str(port), *extra], env=env, stderr=sink)
    base = f"http://127.0.0.1:{port}"
    try:
        until(
            "the server answers /healthz",
            lambda: _status(base + "/healthz") == 200 or process.poll() is not None,
        )
        assert process.poll() is None, log.read_text()
        yield process, base, log
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return None


def drain_scenario(tmp_path: Path, *extra: str) -> None:
    with serve(tmp_path, "--drain-timeout", "120", *extra) as (process, base, log):
        url = base + "/mcp"
        with httpx.Client(timeout=120) as client:
            reply = client.post(url, content=body(INITIALIZE), headers=HEADERS)
            session = {
                **HEADERS,
                "mcp-session-id": reply.headers["mcp-session-id"],
                "mcp-protocol-version": VERSION,
            }
            note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
            client.post(url, content=note, headers=session)
        streamed: list[bytes] = []
        answered: list[httpx.Response] = []

        def listen() -> None:
            get = {**session, "accept": "text/event-stream"}
            with httpx.Client(timeout=120) as own, own.stream("GET", url, headers=get) as stream:
                for chunk in stream.iter_bytes():
                    streamed.append(chunk)

        def call() -> None:
            with httpx.Client(timeout=120) as own:
                answered.append(
                    own.post(url, content=rpc(2, "tools/call", {"name": "slow"}), headers=session)
                )

        threads = [threading.Thread(target=listen), threading.Thread(target=call)]
        for thread in threads:
            thread.start()
        until("the call runs and the stream is open", lambda: (tmp_path / "started").exists() and streamed)
        process.send_signal(signal.SIGTERM)
        until(
            "the GET stream ends with a retry hint",
            lambda: b"".join(streamed).endswith(b"\n\nretry: 1000\n\n"),
        )

        def draining() -> bool:
            try:
                ready = httpx.get(base + "/readyz", timeout=30)
            except httpx.TransportError:  # a worker with nothing left to finish may be closing its socket
                return False
            return (ready.status_code, ready.json()) == (503, {"status": "draining"})

        until("readyz answers 503 draining", draining)
        assert not answered and process.poll() is None  # the call still runs, so the process waits
        (tmp_path / "release").touch()
        for thread in threads:
            thread.join(60)
        assert answered[0].status_code == 200 and "finished" in answered[0].text
        assert process.wait(60) == 0, log.read_text()


def test_sigterm_drains_one_process_and_exits_0(tmp_path: Path) -> None:
    drain_scenario(tmp_path)


def test_sigterm_drains_each_worker_and_exits_0(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        drain_scenario(tmp_path, "--workers", "2", "--redis", redis.url)


def serve_fails(tmp_path: Path, redis_url: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "ops_server.py"), "--http"]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    port = str(free_port())
    return subprocess.run(
        [*argv, "--port", port, "--workers", "2", "--redis", redis_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize("password", ["", "wrong"])
def test_a_wrong_redis_password_exits_at_start_in_one_line(tmp_path: Path, password: str) -> None:
    with redis_server(tmp_path) as redis:
        redis.command("CONFIG", "SET", "requirepass", "right")
        done = serve_fails(tmp_path, f"redis://:{password}@127.0.0.1:{redis.port}/0")
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot reach Redis at redis://***@127.0.0.1" in done.stderr
    assert "wrong" not in done.stderr


def test_an_unreachable_redis_exits_at_start_in_one_line(tmp_path: Path) -> None:
    done = serve_fails(tmp_path, f"redis://127.0.0.1:{free_port()}/0")
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot reach Redis at redis://127.0.0.1" in done.stderr


def test_serve_metrics_flag_serves_prometheus_text_and_is_off_by_default(tmp_path: Path) -> None:
    (tmp_path / "release").touch()
    with serve(tmp_path, "--metrics") as (_, base, _log), httpx.Client(timeout=60) as client:
        reply = client.post(base + "/mcp", content=body(INITIALIZE), headers=HEADERS)
        session = {
            **HEADERS,
            "mcp-session-id": reply.headers["mcp-session-id"],
            "mcp-protocol-version": VERSION,
        }
        client.post(base + "/mcp", content=rpc(2, "tools/call", {"name": "slow"}), headers=session)
        scraped = client.get(base + "/metrics").text
    labels = 'error_type="",mcp_method_name="tools/call",mcp_name="slow"'
    assert f"mcp_server_operation_duration_seconds_count{{{labels}}} 1.0" in scraped
    with serve(tmp_path) as (_, base, _log):
        assert httpx.get(base + "/metrics", timeout=30).status_code == 404


def test_readiness_follows_redis_with_workers(tmp_path: Path) -> None:
    with (
        redis_server(tmp_path) as redis,
        serve(tmp_path, "--workers", "2", "--redis", redis.url) as (_, base, _log),
    ):
        until("ready", lambda: _status(base + "/readyz") == 200)
        redis.stop()
        until("not ready while Redis is down", lambda: _status(base + "/readyz") == 503)
        reason = httpx.get(base + "/readyz", timeout=30).json()["status"]
        assert reason.startswith("redis unavailable"), reason
        assert _status(base + "/healthz") == 200
        redis.start()
        until("ready again", lambda: _status(base + "/readyz") == 200)


def test_behind_a_proxy_the_public_host_and_trusted_forwarded_host_are_answered(tmp_path: Path) -> None:
    public = ("--public-url", "https://mcp.example.com/mcp", "--forwarded-allow-ips", "127.0.0.1,10.0.0.0/8")
    with serve(tmp_path, *public) as (_, base, _log), httpx.Client(timeout=60) as client:

        def status(**headers: str) -> int:
            reply = client.post(base + "/mcp", content=body(INITIALIZE), headers={**HEADERS, **headers})
            return reply.status_code

        assert status(host="mcp.example.com") == 200
        assert status(host="internal.lan:8080", **{"x-forwarded-host": "mcp.example.com"}) == 200
        assert status(host="internal.lan:8080") == 421
    with serve(tmp_path, "--public-url", "https://mcp.example.com/mcp") as (_, base, _log):
        forwarded = {**HEADERS, "host": "internal.lan", "x-forwarded-host": "mcp.example.com"}
        assert httpx.post(base + "/mcp", content=body(INITIALIZE), headers=forwarded).status_code == 421


def test_log_format_json_writes_one_object_per_line_with_the_requests_fields(tmp_path: Path) -> None:
    (tmp_path / "release").touch()
    trace = "0af7651916cd43dd8448eb211c80319c"
    with serve(tmp_path, "--log-format", "json", "--log-level", "info") as (process, base, log):
        with httpx.Client(timeout=60) as client:
            reply = client.post(base + "/mcp", content=body(INITIALIZE), headers=HEADERS)
            sid = reply.headers["mcp-session-id"]
            session = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": VERSION}
            meta = {"traceparent": f"00-{trace}-b7ad6b7169203331-01"}
            client.post(
                base + "/mcp", content=rpc(2, "tools/call", {"name": "slow", "_meta": meta}), headers=session
            )
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    lines = [line for line in log.read_text().splitlines() if not line.startswith("mcpkit: ")]
    records = [json.loads(line) for line in lines]  # every other line is one JSON object
    call = next(r for r in records if r.get("method") == "tools/call")
    assert (call["name"], call["session"], call["trace_id"], call["outcome"]) == ("slow", sid, trace, "ok")
    assert call["duration_ms"] >= 0 and call["level"] == "info" and call["logger"] == "mcpkit.requests"


def deploy_haproxy_config(port: int, workers: list[str]) -> str:
    """deploy/haproxy.cfg on this machine: bound to 127.0.0.1:`port`, the workers named instead of found
    by Docker's DNS; everything else (defaults, readiness checks) as shipped."""
    text = (REPO / "deploy" / "haproxy.cfg").read_text()
    text = text.replace("bind :8080", f"bind 127.0.0.1:{port}")
    text = text.replace("resolvers docker\n    nameserver dns 127.0.0.11:53\n    hold valid 5s\n", "")
    text = text.replace(" resolvers docker init-addr last,libc,none", "")
    servers = "".join(f"    server w{i} {hostport}\n" for i, hostport in enumerate(workers))
    return re.sub(r"    server-template .*\n", servers, text)


def test_the_deploy_haproxy_config_takes_a_draining_worker_out_of_rotation(tmp_path: Path) -> None:
    binary = shutil.which("haproxy") or pytest.skip("haproxy is not installed")
    with redis_server(tmp_path) as redis, contextlib.ExitStack() as stack:
        first, second = (
            stack.enter_context(
                serve(tmp_path, "--redis", redis.url, "--drain-timeout", "120", log_name=f"w{i}.log")
            )
            for i in (1, 2)
        )
        port = free_port()
        config = tmp_path / "haproxy.cfg"
        config.write_text(
            deploy_haproxy_config(port, [b.removeprefix("http://") for _, b, _ in (first, second)])
        )
        proxy = subprocess.Popen(
            [binary, "-f", str(config), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        stack.callback(proxy.wait, 10)
        stack.callback(proxy.terminate)
        url = f"http://127.0.0.1:{port}/mcp"

        def initialized() -> int | None:
            try:
                return httpx.post(url, content=body(INITIALIZE), headers=HEADERS, timeout=30).status_code
            except httpx.HTTPError:
                return None

        until("haproxy serves both workers", lambda: all(initialized() == 200 for _ in range(4)))
        (tmp_path / "release").unlink(missing_ok=True)
        with httpx.Client(timeout=120) as client:
            reply = client.post(url, content=body(INITIALIZE), headers=HEADERS)
            session = {
                **HEADERS,
                "mcp-session-id": reply.headers["mcp-session-id"],
                "mcp-protocol-version": VERSION,
            }
        answered: list[httpx.Response] = []

        def call() -> None:
            with httpx.Client(timeout=120) as own:  # through haproxy, to whichever worker
                answered.append(
                    own.post(url, content=rpc(2, "tools/call", {"name": "slow"}), headers=session)
                )

        caller = threading.Thread(target=call)
        caller.start()
        until("the call runs", (tmp_path / "started").exists)
        first[0].send_signal(signal.SIGTERM)  # the first worker drains, whether or not it runs the call
        until(
            "every new session lands on the worker that is not draining",
            lambda: all(initialized() == 200 for _ in range(6)),
        )
        (tmp_path / "release").touch()
        caller.join(60)
        assert answered[0].status_code == 200 and "finished" in answered[0].text
        assert first[0].wait(60) == 0
        assert second[0].poll() is None
