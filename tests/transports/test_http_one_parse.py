"""Streamable HTTP parses each message once (the MessageStream envelope): the server decodes a POSTed
request once and never re-reads the response it sends; the client decodes each message it receives once
and never re-reads what it sends. Counted as calls of orjson.loads, the parser every decode goes through."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

import peers
from mcpkit import Server
from mcpkit.client.client import connect_http
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


class Parses:
    def __init__(self) -> None:
        self.count = 0

    @contextmanager
    def counting(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        real = orjson.loads

        def loads(data: Any) -> Any:
            self.count += 1
            return real(data)

        monkeypatch.setattr(orjson, "loads", loads)
        try:
            yield
        finally:
            monkeypatch.setattr(orjson, "loads", real)


def echo_server() -> Server:
    server = Server("echo")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def call(rid: int) -> bytes:
    params = {"name": "echo", "arguments": {"text": "hi"}}
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_the_server_parses_a_posted_request_once(
    monkeypatch: pytest.MonkeyPatch, json_response: bool
) -> None:
    app = StreamableHTTPApp(echo_server(), json_response=json_response)
    parses = Parses()
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    init = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
        opened = await http.post("/mcp", content=init, headers=HEADERS)
        session = {
            **HEADERS,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await http.post("/mcp", content=note, headers=session)
        with parses.counting(monkeypatch):
            answered = await http.post("/mcp", content=call(1), headers=session)
        await app.aclose()
    assert answered.status_code == 200 and b'"text":"hi"' in answered.content
    assert parses.count == 1  # 4 before the envelope: the body decoded twice, the response read back


async def test_the_client_parses_each_answer_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the server runs in its own process, so only the client's parsing is counted here
    port = peers.free_port()
    script = str(ROOT / "examples" / "commerce" / "server.py")
    command = [sys.executable, script, "--db", str(tmp_path / "shop.db"), "--http", "--port", str(port)]
    parses = Parses()
    with peers.server_process(command, port, {"PYTHONPATH": str(ROOT / "src")}):
        async with connect_http(f"http://127.0.0.1:{port}/mcp", timeout=10) as client:
            await client.call_tool("check_inventory", {"sku": "ACC-FLT-100"})  # output schema cached
            with parses.counting(monkeypatch):
                result = await client.call_tool("check_inventory", {"sku": "ACC-FLT-100"})
    assert result["structuredContent"]["total"] == 240
    assert parses.count == 1  # 3 before the envelope: each event read for its id, then by the session


async def test_a_stateless_error_gets_its_status_without_a_second_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = StreamableHTTPApp(echo_server(), json_response=True)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "nope", "arguments": {}, "_meta": meta}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = {
        **HEADERS,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "nope",
    }
    parses = Parses()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as http:
        with parses.counting(monkeypatch):
            answered = await http.post("/mcp", content=body, headers=headers)
        await app.aclose()
    assert answered.status_code == 400 and answered.json()["error"]["code"] == -32602
    assert parses.count == 1  # 2 before: the status was read off the error response parsed again
