"""The scale-out test parts themselves (tests/cluster/parts.py): redis-server, uvicorn workers, haproxy."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cluster.parts import Cluster, cluster, haproxy_config, redis_server
from mcpkit.protocol.sse import SSEDecoder

V = "2026-07-28"
META = "io.modelcontextprotocol/"
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def stateless_call(
    rid: int, name: str, arguments: dict[str, Any], **meta: Any
) -> tuple[dict[str, str], bytes]:
    """A 2026-07-28 tools/call without a session, as tests/transports/test_http_stateless.py sends it."""
    headers = {**BASE, "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": name}
    fields = {
        META + "protocolVersion": V,
        META + "clientCapabilities": {},
        **{META + k: v for k, v in meta.items()},
    }
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"_meta": fields, "name": name, "arguments": arguments},
    }
    return headers, json.dumps(body).encode()


def call_whoami(http: httpx.Client, url: str, rid: int) -> httpx.Response:
    headers, body = stateless_call(rid, "whoami", {})
    reply = http.post(url, content=body, headers=headers)
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["resultType"] == "complete"
    return reply


def whoami(http: httpx.Client, url: str, rid: int) -> tuple[str, str]:
    """(the x-mcpkit-worker header, the name the whoami tool returned) of one call through `url`."""
    reply = call_whoami(http, url, rid)
    return reply.headers["x-mcpkit-worker"], reply.json()["result"]["content"][0]["text"]


def client_address(reply: httpx.Response) -> Any:
    """The client's (address, port) of the connection `reply` came over."""
    return reply.extensions["network_stream"].get_extra_info("client_addr")


@pytest.fixture
def three(tmp_path: Path) -> Iterator[Cluster]:
    with cluster(3, tmp_dir=tmp_path) as parts:
        yield parts


# ---- redis -------------------------------------------------------------------------------------


def test_redis_starts_and_answers(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        assert server.command("PING") is True
        server.command("SET", "k", "v")
        assert server.command("GET", "k") == b"v"
        process = server.process
    assert process is not None and process.poll() is not None  # the block's end stopped it
    assert not list(tmp_path.iterdir())  # and removed its directory


@pytest.mark.parametrize("appendonly", [True, False])
def test_a_restart_keeps_the_data_only_with_appendonly(tmp_path: Path, appendonly: bool) -> None:
    with redis_server(tmp_path, appendonly=appendonly) as server:
        server.command("SET", "kept", "yes")
        port, first = server.port, server.process
        server.stop()
        assert not server.alive()
        server.start()
        assert server.port == port and server.process is not first and server.alive()
        assert server.command("GET", "kept") == (b"yes" if appendonly else None)


# ---- workers behind haproxy --------------------------------------------------------------------


def test_workers_answer_directly_with_their_name(three: Cluster) -> None:
    with httpx.Client(timeout=10) as http:
        named = [whoami(http, url, i) for i, url in enumerate(three.workers.urls)]
        headers, body = stateless_call(9, "add", {"a": 2, "b": 3})
        added = http.post(three.workers.urls[0], content=body, headers=headers).json()["result"]
    assert named == [("w1", "w1"), ("w2", "w2"), ("w3", "w3")]
    assert added["structuredContent"] == {"result": 5} or added["content"][0]["text"] == "5"
    assert len(set(three.workers.pids)) == 3 and all(three.workers.alive(i) for i in range(3))


def test_haproxy_balances_each_request_of_one_keep_alive_connection(three: Cluster) -> None:
    with httpx.Client(timeout=10) as http:
        replies = [call_whoami(http, three.url, i) for i in range(6)]
        addresses = {client_address(reply) for reply in replies}  # while the connection is open
    names = [reply.headers["x-mcpkit-worker"] for reply in replies]
    ran = [reply.json()["result"]["content"][0]["text"] for reply in replies]
    assert names == ran  # the header names the worker that ran the call
    assert set(names) == {"w1", "w2", "w3"}
    assert names[:3] == names[3:]  # round robin: the same turn twice
    assert len(addresses) == 1  # ... all six over one client connection


def test_a_killed_worker_is_routed_around(three: Cluster) -> None:
    with httpx.Client(timeout=10) as http:
        assert {whoami(http, three.url, i)[0] for i in range(3)} == {"w1", "w2", "w3"}
        three.workers.kill(0)
        assert not three.workers.alive(0)
        after = [whoami(http, three.url, 10 + i)[0] for i in range(8)]  # none fails: retried elsewhere
        deadline = time.monotonic() + 5
        while three.proxy.servers()["w1"]["status"] != "DOWN" and time.monotonic() < deadline:
            time.sleep(0.05)
        stats = three.proxy.servers()
    assert set(after) == {"w2", "w3"}
    assert three.workers.alive(1) and three.workers.alive(2)
    assert stats["w1"]["status"] == "DOWN" and stats["w2"]["status"] == "UP" == stats["w3"]["status"]


def test_sse_events_pass_haproxy_as_they_are_sent(three: Cluster) -> None:
    count, interval = 4, 0.5
    headers, body = stateless_call(1, "tick", {"count": count, "interval": interval}, logLevel="info")
    arrivals: list[tuple[float, dict[str, Any]]] = []
    with httpx.Client(timeout=10) as http:
        started = time.monotonic()
        with http.stream("POST", three.url, content=body, headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            decoder = SSEDecoder()
            for chunk in response.iter_bytes():
                at = time.monotonic() - started
                arrivals += [(at, json.loads(e.data)) for e in decoder.feed(chunk) if e.data]
    methods = [frame.get("method") for _, frame in arrivals]
    assert methods == ["notifications/message"] * count + [None]
    assert arrivals[-1][1]["result"]["content"][0]["text"] == "done"
    times = [at for at, _ in arrivals]
    assert times[-1] >= count * interval * 0.9
    # Each tick arrived about when it was sent, not all at the end: the first well before the answer,
    # and consecutive ticks spread out by about `interval`.
    assert times[0] < times[-1] - (count - 1) * interval * 0.8
    assert all(b - a > interval * 0.5 for a, b in itertools.pairwise(times[:count]))


def test_the_haproxy_config_has_no_stickiness() -> None:
    config = haproxy_config(8000, [8001, 8002], "/tmp/stats.sock")
    assert "balance roundrobin" in config and "prefer-last-server" not in config
    assert "stick" not in config and "cookie" not in config and "http-buffer-request" not in config
    assert "server w1 127.0.0.1:8001 check inter 200 fall 1 rise 1" in config
