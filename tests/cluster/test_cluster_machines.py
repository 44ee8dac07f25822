"""Two machines sharing one Redis (issue 29): two `mcpkit serve --http --workers 2 --redis URL` runs on two
ports, and a multi round-trip call whose rounds land on different machines. In the 2026-07-28 era the
second round carries the requestState the other machine sealed, so both must hold one key: from a shared
`--state-key-file` (or MCPKIT_STATE_KEY_FILE), else derived from the secret both find in Redis. In the
handshake era the client's answer to an elicitation, posted to the other machine, reaches the waiting
handler through Redis. And a `rediss://` Redis (TLS) serves the same."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from cluster.parts import RedisProcess, free_port, redis_server
from cluster.tls_redis import tls_redis
from mcpkit.protocol.sse import SSEDecoder
from peers import server_process

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
MODERN, HANDSHAKE = "2026-07-28", "2025-11-25"
META = "io.modelcontextprotocol/"
ADA = {"action": "accept", "content": {"name": "Ada"}}


@contextmanager
def machines(
    redis: RedisProcess, *options: Sequence[str], env: Sequence[dict[str, str]] = ({}, {})
) -> Iterator[list[str]]:
    """Two runs of `mcpkit serve ... --workers 2 --redis`, each with its own options and environment;
    yields their MCP URLs."""
    urls: list[str] = []
    with ExitStack() as stack:
        for extra, more_env in zip(options, env, strict=True):
            port = free_port()
            command = [
                sys.executable,
                "-m",
                "mcpkit.cli",
                "serve",
                str(HERE / "machines_server.py"),
                "--http",
            ]
            command += ["--port", str(port), "--workers", "2", "--redis", redis.url, *extra]
            stack.enter_context(server_process(command, port, {"PYTHONPATH": str(REPO / "src"), **more_env}))
            urls.append(f"http://127.0.0.1:{port}/mcp")
        yield urls


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC response a POST was answered with, as JSON or as the last event of an SSE stream (a
    2026-07-28 invalid-params error comes with 400)."""
    assert response.status_code in (200, 400), response.text
    if response.headers["content-type"].startswith("application/json"):
        return dict(response.json())
    events = [json.loads(e.data) for e in SSEDecoder().feed(response.content) if e.data]
    return dict(events[-1])


def modern_call(rid: int, **params: Any) -> tuple[dict[str, str], bytes]:
    meta = {META + "protocolVersion": MODERN, META + "clientCapabilities": {"elicitation": {}}}
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
    body["params"] = {"name": "ask", "arguments": {}, "_meta": meta, **params}
    headers = {**BASE, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "ask"}
    return headers, json.dumps(body).encode()


def modern_rounds(first: str, second: str) -> dict[str, Any]:
    """The first round on `first`, the second (with the answer and the sealed state) on `second`."""
    with httpx.Client(timeout=30) as http:
        headers, body = modern_call(1)
        asked = answer_of(http.post(first, content=body, headers=headers))["result"]
        assert asked["resultType"] == "input_required" and "who" in asked["inputRequests"], asked
        state = asked["requestState"]
        headers, body = modern_call(2, inputResponses={"who": ADA}, requestState=state)
        return answer_of(http.post(second, content=body, headers=headers))


def handshake_rounds(first: str, second: str) -> dict[str, Any]:
    """initialize and tools/call on `first`; the elicitation's answer POSTed to `second`."""
    with httpx.Client(timeout=30) as http:
        info = {"name": "t", "version": "1"}
        init = {"protocolVersion": HANDSHAKE, "capabilities": {"elicitation": {}}, "clientInfo": info}
        opened = http.post(
            first, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=BASE
        )
        assert opened.status_code == 200, opened.text
        session = {
            **BASE,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": HANDSHAKE,
        }
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
        decoder = SSEDecoder()
        with http.stream("POST", first, json=call, headers=session) as stream:
            for chunk in stream.iter_bytes():
                for event in decoder.feed(chunk):
                    message = json.loads(event.data) if event.data else {}
                    if message.get("method") == "elicitation/create":
                        answer = {"jsonrpc": "2.0", "id": message["id"], "result": ADA}
                        assert http.post(second, json=answer, headers=session).status_code == 202
                    elif message.get("id") == 2:
                        return dict(message)
    raise AssertionError("the call's stream ended without its response")


def key_file(directory: Path, name: str, key: str) -> Path:
    path = directory / name
    path.write_text(key + "\n")
    return path


def test_two_machines_with_a_shared_state_key_file_pass_both_eras_across_them(tmp_path: Path) -> None:
    shared = key_file(tmp_path, "state.key", "a" * 64)
    with redis_server(tmp_path) as redis:
        flags = ["--state-key-file", str(shared)]
        with machines(redis, flags, [], env=({}, {"MCPKIT_STATE_KEY_FILE": str(shared)})) as (a, b):
            modern = [modern_rounds(a, b), modern_rounds(b, a)]
            handshake = [handshake_rounds(a, b), handshake_rounds(b, a)]
    for answered in modern + handshake:
        assert answered["result"]["content"][0]["text"] == "hi Ada", answered


def test_two_machines_without_a_key_file_derive_one_key_from_redis(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis, machines(redis, [], []) as (a, b):
        answered = modern_rounds(a, b)
        secret = redis.command("EXISTS", "mcp:state-secret")
    assert answered["result"]["content"][0]["text"] == "hi Ada", answered
    assert secret == 1


def test_a_machine_with_another_state_key_file_refuses_the_others_request_state(tmp_path: Path) -> None:
    first, second = key_file(tmp_path, "a.key", "a" * 64), key_file(tmp_path, "b.key", "b" * 64)
    with redis_server(tmp_path) as redis:
        flags = (["--state-key-file", str(first)], ["--state-key-file", str(second)])
        with machines(redis, *flags) as (a, b):
            refused = modern_rounds(a, b)
            same_machine = modern_rounds(a, a)
    assert refused["error"]["code"] == -32602 and "requestState rejected" in refused["error"]["message"]
    assert same_machine["result"]["content"][0]["text"] == "hi Ada"


@pytest.mark.parametrize(
    ("content", "why"),
    [(None, "cannot read the state key file"), ("short", "holds 5 bytes, fewer than 32")],
)
def test_a_missing_or_short_state_key_file_is_refused_at_start_in_one_line(
    tmp_path: Path, content: str | None, why: str
) -> None:
    path = tmp_path / "state.key"
    if content is not None:
        path.write_text(content)
    command = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "machines_server.py"), "--http"]
    command += ["--port", str(free_port()), "--state-key-file", str(path)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(REPO / "src")}
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("mcpkit: ") and why in line


def test_serve_with_a_tls_redis_url_passes_both_eras(tmp_path: Path) -> None:
    with tls_redis(tmp_path) as url:
        port = free_port()
        command = [sys.executable, "-m", "mcpkit.cli", "serve", str(HERE / "machines_server.py"), "--http"]
        command += ["--port", str(port), "--workers", "2", "--redis", url]
        with server_process(command, port, {"PYTHONPATH": str(REPO / "src")}):
            mcp = f"http://127.0.0.1:{port}/mcp"
            answered = [modern_rounds(mcp, mcp), handshake_rounds(mcp, mcp)]
    for answer in answered:
        assert answer["result"]["content"][0]["text"] == "hi Ada", answer
