"""The proxy asks the client whose call a remote's question belongs to, never another (issue 31 item
23): the official SDK's server asks in one client's call while another client's call is in flight."""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpkit.protocol.errors import RemoteError
from mcpkit.proxy import open_proxy
from mcpkit.server.server import Server
from mcpkit.testing import connect
from peers import free_port, server_process

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
SDK_SERVER = Path(__file__).resolve().parent / "sdk_server.py"
ROOT = SDK_SERVER.parents[2]


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, str(SDK_SERVER), "--http", "--port", str(port)]
    with server_process(command, port, {"PYTHONPATH": str(ROOT / "src")}), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield f"http://127.0.0.1:{port}/mcp"


class Far:
    """A far client's elicitation answers (its own number of guests), and what it was asked."""

    def __init__(self, guests: int) -> None:
        self.guests, self.asked = guests, list[str]()

    def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params["message"])
        return {"action": "accept", "content": {"guests": self.guests, "confirm": True}}


@asynccontextmanager
async def proxied(target: str | list[str]) -> AsyncIterator[Server]:
    with anyio.fail_after(30):
        async with open_proxy(target, timeout=20, era="handshake") as server:
            yield server


async def a_asks_while_b_calls(server: Server) -> tuple[Far, Far, dict[str, Any]]:
    """A's call asks after a second; B's call starts meanwhile and is still in flight when it asks."""
    a, b = Far(guests=1), Far(guests=9)
    results: dict[str, Any] = {}
    async with (
        connect(server, era="handshake", elicitation=a.elicitation) as client_a,
        connect(server, era="handshake", elicitation=b.elicitation) as client_b,
    ):

        async def call_a() -> None:
            try:
                results["a"] = await client_a.call_tool("book_later", {"restaurant": "Noma", "delay": 1.0})
            except RemoteError as exc:
                results["a"] = exc

        async with anyio.create_task_group() as tg:
            tg.start_soon(call_a)
            await anyio.sleep(0.3)
            results["b"] = await client_b.call_tool("hold", {"seconds": 2.0})
    return a, b, results


def text(result: dict[str, Any]) -> str:
    return " ".join(block.get("text", "") for block in result["content"])


async def test_an_http_remotes_question_goes_to_the_client_whose_call_asked(sdk_url: str) -> None:
    async with proxied(sdk_url) as server:
        a, b, results = await a_asks_while_b_calls(server)
    assert a.asked == ["Book Noma?"] and b.asked == []
    assert text(results["a"]) == "accepted guests=1 confirm=True"
    assert text(results["b"]) == "held"


async def test_a_stdio_remotes_question_is_refused_while_two_clients_calls_are_in_flight() -> None:
    async with proxied([sys.executable, str(SDK_SERVER)]) as server:
        a, b, results = await a_asks_while_b_calls(server)
    assert a.asked == [] and b.asked == []  # stdio names no call: neither client may be asked
    assert isinstance(results["a"], RemoteError) and "refused: 2 clients" in str(results["a"])
    assert text(results["b"]) == "held"


async def test_a_stdio_remotes_question_goes_to_the_only_client_with_calls_in_flight() -> None:
    async with proxied([sys.executable, str(SDK_SERVER)]) as server:
        a = Far(guests=3)
        async with connect(server, era="handshake", elicitation=a.elicitation) as client:
            result = await client.call_tool("book", {"restaurant": "Noma"})
    assert a.asked == ["Book Noma?"] and text(result) == "accepted guests=3 confirm=True"
