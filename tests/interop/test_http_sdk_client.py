"""The official SDK's Streamable HTTP client against mcpkit's HTTP server (examples/everything.py --http)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from test_official_sdk import Recorder

from peers import free_port, server_process

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
ROOT = Path(__file__).resolve().parents[2]
warnings.filterwarnings("ignore", category=UserWarning)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, str(ROOT / "examples" / "everything.py"), "--http", "--port", str(port)]
    with server_process(command, port, {"PYTHONPATH": str(ROOT / "src")}):
        yield f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def session(url: str, rec: Recorder) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(
            read,
            write,
            sampling_callback=rec.sampling,
            elicitation_callback=rec.elicitation,
            list_roots_callback=rec.list_roots,
            logging_callback=rec.logging,
        ) as s:
            await s.initialize()
            yield s


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def test_sdk_http_client_lists_and_calls_tools(url: str) -> None:
    async with session(url, Recorder()) as s:
        assert s.protocol_version == "2025-11-25"
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"echo", "add", "slow", "summarize"} <= names
        added = await s.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        assert texts(await s.call_tool("echo", {"text": "over http"})) == ["over http"]


async def test_sdk_http_client_answers_sampling_elicitation_and_roots_on_the_post_stream(url: str) -> None:
    rec = Recorder()
    async with session(url, rec) as s:
        summary = await s.call_tool("summarize", {"topic": "tides"})
        booking = await s.call_tool("book_table", {"restaurant": "Noma"})
        roots = await s.call_tool("list_client_roots", {})
    assert texts(summary) == ["A one-line summary from the SDK."]
    assert texts(booking) == ["Booked Noma for 4."]
    assert roots.structured_content == {"result": ["file:///work/project-a", "file:///work/project-b"]}


async def test_sdk_http_client_gets_progress_and_logs(url: str) -> None:
    rec = Recorder()
    seen: list[float] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with session(url, rec) as s:
        await s.set_logging_level("warning")
        await s.call_tool("slow", {"seconds": 0.2}, progress_callback=progress)
        await s.call_tool("log_levels", {})
        await s.send_ping()
    assert seen == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert [entry.level for entry in rec.logs] == ["warning", "error", "critical", "alert", "emergency"]


async def test_sdk_http_client_reads_resources_and_prompts(url: str) -> None:
    async with session(url, Recorder()) as s:
        readme = await s.read_resource("demo://readme")
        note = await s.read_resource("demo://notes/4")
        prompt = await s.get_prompt("greet", {"name": "Ann"})
    assert "mcpkit everything" in readme.contents[0].text  # type: ignore[union-attr]
    assert note.contents[0].text == "Note number 4"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Write a friendly greeting for Ann."  # type: ignore[union-attr]


# ---- 2026-07-28 over HTTP: the SDK's high-level Client in auto mode, and pinned to the handshake era ----


async def test_the_sdk_client_in_auto_mode_ends_modern_over_http_and_elicits_by_round_trip(url: str) -> None:
    from mcp.client.client import Client as SDKClient

    rec = Recorder()
    for mode, version in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
        async with SDKClient(url, mode=mode, elicitation_callback=rec.elicitation) as client:
            assert client.protocol_version == version
            booked = await client.call_tool("book_table", {"restaurant": "Chez HTTP"})
            assert texts(booked) == ["Booked Chez HTTP for 4."], mode
            assert texts(await client.call_tool("echo", {"text": "over http"})) == ["over http"]
    assert len(rec.elicitations) == 2  # one per era, the same tool
