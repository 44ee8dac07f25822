"""Bad input over real stdio pipes: every case gets a clear error and the server keeps serving."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import messages

ROOT = Path(__file__).resolve().parents[2]
NOISY = str(ROOT / "tests" / "transports" / "noisy_server.py")


class Peer:
    """A raw line-level peer of a server process."""

    def __init__(self, *args: str, initialize: bool = True, eof_grace: float | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        if eof_grace is not None:
            env["NOISY_EOF_GRACE"] = str(eof_grace)
        self.process = subprocess.Popen(
            [sys.executable, NOISY, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        if initialize:
            assert self.ask(messages.initialize(rid=0))["result"]["protocolVersion"] == "2025-11-25"
            self.write_json({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def write_json(self, message: Any) -> None:
        self.write(orjson.dumps(message))

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the server closed stdout"
        value: dict[str, Any] = orjson.loads(line)
        return value

    def ask(self, message: Any) -> dict[str, Any]:
        self.write_json(message)
        return self.read()

    def still_serves(self, rid: int | str = 99) -> None:
        call = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "shout", "arguments": {"text": "ok"}},
        }
        reply = self.ask(call)
        assert reply["id"] == rid and reply["result"]["content"] == [{"type": "text", "text": "OK"}]

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(10)
        return code


@pytest.fixture
def peer() -> Any:
    p = Peer()
    yield p
    if p.process.poll() is None:
        p.process.kill()
        p.process.wait()


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"\xff\xfe\xfd",
        b'{"jsonrpc":"2.0","id":1,\x00"method":"ping"}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["invalid-json", "invalid-utf8", "nul-byte", "deep-nesting"],
)
def test_undecodable_lines_get_a_parse_error_and_serving_goes_on(peer: Peer, raw: bytes) -> None:
    peer.write(raw)
    reply = peer.read()
    assert reply["id"] is None and reply["error"]["code"] == -32700
    peer.still_serves()


@pytest.mark.parametrize(
    "value",
    [
        [],
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        "text",
        42,
        {"id": 1, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": {}, "method": "ping"},
    ],
    ids=[
        "empty-batch",
        "batch",
        "string",
        "number",
        "no-jsonrpc",
        "jsonrpc-1.0",
        "null-id",
        "float-id",
        "bool-id",
        "object-id",
    ],
)
def test_json_that_is_not_one_request_is_an_invalid_request(peer: Peer, value: Any) -> None:
    reply = peer.ask(value)
    assert reply["error"]["code"] == -32600
    peer.still_serves()


@pytest.mark.parametrize("rid", ["string-id", 12345, 0])
def test_ids_are_echoed_exactly(peer: Peer, rid: str | int) -> None:
    peer.still_serves(rid)


def test_an_over_long_line_is_an_error_without_holding_it_and_the_next_request_is_answered() -> None:
    p = Peer("4096")
    try:
        p.write(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"x":"' + b"a" * 50_000 + b'"}}')
        reply = p.read()
        assert reply["error"]["code"] == -32600 and "4096" in reply["error"]["message"]
        p.still_serves()
    finally:
        p.process.kill()
        p.process.wait()


def test_requests_before_initialize_are_errors_but_ping_is_answered() -> None:
    # A dual-era server reads a bare request before initialize as a 2026-07-28 one lacking _meta.
    p = Peer(initialize=False)
    try:
        error = p.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["error"]
        assert error["code"] == -32602 and "initialize" in error["message"]
        assert p.ask({"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {},
        }
    finally:
        p.process.kill()
        p.process.wait()


def test_stray_prints_and_child_output_never_reach_stdout(peer: Peer) -> None:
    peer.still_serves(1)
    peer.still_serves(2)
    assert peer.close() == 0
    assert peer.process.stdout is not None and peer.process.stdout.read() == b""
    assert peer.process.stderr is not None
    stderr = peer.process.stderr.read()
    assert b"stray print from a tool" in stderr and b"stray output from a child" in stderr


def test_a_cancelled_call_gets_no_response_and_later_calls_are_answered(peer: Peer) -> None:
    peer.write_json(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 30}},
        }
    )
    peer.write_json(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no"}}
    )
    peer.still_serves(8)  # the next line is the answer to 8, not to 7


def _call(rid: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def test_requests_read_before_eof_on_stdin_are_still_answered() -> None:
    # transports "stdio", shutdown: the client closes stdin and waits for the server to exit
    peer = Peer()
    for rid in (1, 2, 3):
        peer.write_json(_call(rid, "nap", seconds=0.2 * rid))
    peer.write_json(_call(4, "shout", text="last"))
    assert peer.process.stdin is not None
    peer.process.stdin.close()
    assert peer.process.stdout is not None
    replies = [orjson.loads(line) for line in peer.process.stdout]
    assert sorted(r["id"] for r in replies) == [1, 2, 3, 4]
    texts = {r["id"]: r["result"]["content"][0]["text"] for r in replies}
    assert texts == {1: "rested", 2: "rested", 3: "rested", 4: "LAST"}
    assert peer.process.wait(10) == 0


def test_a_request_to_the_client_after_eof_fails_at_once_instead_of_waiting() -> None:
    peer = Peer(initialize=False)
    init = messages.initialize(rid=0, capabilities={"roots": {}})
    assert peer.ask(init)["result"]["protocolVersion"] == "2025-11-25"
    peer.write_json({"jsonrpc": "2.0", "method": "notifications/initialized"})
    peer.write_json(_call(5, "count_roots"))
    assert peer.read()["method"] == "roots/list"  # the server asks; the client leaves without answering
    started = time.monotonic()
    assert peer.process.stdin is not None
    peer.process.stdin.close()
    assert peer.process.stdout is not None
    reply = orjson.loads(peer.process.stdout.readline())
    assert reply["id"] == 5 and reply["result"]["content"][0]["text"].startswith("failed: Connection closed")
    assert peer.process.wait(10) == 0
    assert time.monotonic() - started < 3  # not the default 5 s grace


def test_eof_on_stdin_cancels_work_still_running_after_the_grace_and_exits() -> None:
    peer = Peer(eof_grace=0.5)
    peer.write_json(_call(7, "nap", seconds=60))
    started = time.monotonic()
    assert peer.close() == 0
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed < 5
    assert peer.process.stdout is not None
    assert peer.process.stdout.read() == b""  # the cancelled request is not answered


def test_sigterm_exits_cleanly(peer: Peer) -> None:
    peer.write_json(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "nap", "arguments": {"seconds": 60}},
        }
    )
    time.sleep(0.2)
    peer.process.send_signal(signal.SIGTERM)
    assert peer.process.wait(5) == 0


@pytest.mark.anyio
async def test_the_client_survives_garbage_from_the_server() -> None:
    from mcpkit.client.client import connect_stdio

    script = str(ROOT / "tests" / "transports" / "garbage_server.py")
    async with connect_stdio([sys.executable, script], timeout=10) as client:
        assert await client.list_tools() == {"tools": []}
        assert await client.list_tools() == {"tools": []}
