"""A result that cannot be encoded as JSON is still answered (-32603) and the server keeps serving:
over a real stdio subprocess and over stateless HTTP on a real uvicorn."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from test_http_server import running
from test_http_stateless import post

from mcpkit import Server
from mcpkit.transports.http_server import StreamableHTTPApp

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(ROOT / "tests" / "transports" / "overflow_server.py")
BIG = 2**64 - 1  # the sum, 2**65 - 2, is beyond what orjson encodes


def call(rid: int, a: int, b: int) -> dict[str, Any]:
    arguments = {"a": a, "b": b}
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "add", "arguments": arguments},
    }


def test_an_unencodable_result_over_stdio_is_internal_error_and_serving_goes_on() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(
        [sys.executable, SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(1, BIG, BIG),
        call(2, 2, 3),
    ]
    # The stdlib encodes the big integers orjson would refuse.
    process.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    process.stdin.flush()
    lines_out: queue.Queue[bytes] = queue.Queue()
    stdout = process.stdout

    def pump() -> None:
        for line in stdout:
            lines_out.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        # An answer that never comes fails here instead of hanging the test.
        replies = [orjson.loads(lines_out.get(timeout=20)) for _ in range(3)]
    finally:
        process.stdin.close()
        process.wait(10)
    failed, ok = replies[1], replies[2]
    assert failed["id"] == 1 and failed["error"]["code"] == -32603
    assert "encoded" in failed["error"]["message"]
    assert ok["id"] == 2 and ok["result"]["structuredContent"] == {"result": 5}


def overflow_server() -> Server:
    server = Server("overflow-http")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


@pytest.mark.anyio
async def test_an_unencodable_result_over_stateless_http_is_internal_error_and_serving_goes_on() -> None:
    async with running(StreamableHTTPApp(overflow_server())) as url, httpx.AsyncClient(timeout=20) as http:
        failed = await post(http, url, 1, "tools/call", {"name": "add", "arguments": {"a": BIG, "b": BIG}})
        ok = await post(http, url, 2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert failed.json()["id"] == 1 and failed.json()["error"]["code"] == -32603
    assert ok.status_code == 200 and ok.json()["result"]["structuredContent"] == {"result": 5}
