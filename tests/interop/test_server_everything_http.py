"""mcpkit's client against the TypeScript `@modelcontextprotocol/server-everything` over Streamable HTTP.

The server runs as `node dist/index.js streamableHttp`, listening on $PORT at /mcp, with its own event
store; one process serves the module, each test opens its own session. Server-initiated requests
(sampling, elicitation, roots) come on the POST stream of the tool call that makes them.
"""

from __future__ import annotations

import base64
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from test_server_everything import SAMPLED, SERVER, elicit, sample

from mcpkit.client import Client, connect_http
from peers import free_port, server_process

pytestmark = [pytest.mark.interop, pytest.mark.anyio]


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    if not SERVER.is_file() or shutil.which("node") is None:
        pytest.skip(f"server-everything is not installed at {SERVER} (scripts/setup-peers installs it)")
    port = free_port()
    with server_process(["node", str(SERVER), "streamableHttp"], port, {"PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def everything(url: str, **options: Any) -> AsyncIterator[Client]:
    with anyio.fail_after(60):
        async with connect_http(
            url,
            sampling=sample,
            elicitation=elicit,
            roots=[{"uri": "file:///tmp/project", "name": "project"}],
            timeout=30,
            **options,
        ) as client:
            yield client


async def test_tools_are_listed_and_echo_and_sum_answer_over_http(everything_url: str) -> None:
    async with everything(everything_url) as client:
        names = {t["name"] for t in await client.list_all_tools()}
        echo = await client.call_tool("echo", {"message": "hello over http"})
        total = await client.call_tool("get-sum", {"a": 2, "b": 3})
        structured = await client.call_tool("get-structured-content", {"location": "New York"})
    assert {"echo", "get-sum", "trigger-sampling-request", "trigger-elicitation-request"} <= names
    assert "hello over http" in echo["content"][0]["text"]
    assert "5" in total["content"][0]["text"]
    assert isinstance(structured["structuredContent"], dict) and structured["structuredContent"]


async def test_sampling_elicitation_and_roots_requests_reach_the_client_over_http(
    everything_url: str,
) -> None:
    SAMPLED.clear()
    async with everything(everything_url) as client:
        sampled = await client.call_tool(
            "trigger-sampling-request", {"prompt": "say something", "maxTokens": 20}
        )
        elicited = await client.call_tool("trigger-elicitation-request", {})
        roots = await client.call_tool("get-roots-list", {})
    assert "sampled words" in str(sampled["content"]) and SAMPLED and SAMPLED[0]["maxTokens"] == 20
    assert "ada@example.com" in str(elicited["content"])
    assert "file:///tmp/project" in str(roots["content"])


async def test_progress_arrives_over_http_for_the_long_running_operation(everything_url: str) -> None:
    seen: list[float] = []
    async with everything(everything_url) as client:
        await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            on_progress=lambda p, t, m: seen.append(p),
        )
    assert seen == sorted(seen) and len(seen) == 3


async def test_resources_and_templates_are_read_over_http(everything_url: str) -> None:
    async with everything(everything_url) as client:
        resources = await client.list_all_resources()
        templates = await client.list_all_resource_templates()
        first = (await client.read_resource(resources[0]["uri"]))["contents"]
        text = await client.read_resource("demo://resource/dynamic/text/3")
        blob = await client.read_resource("demo://resource/dynamic/blob/3")
    assert resources and templates and first
    assert "text" in text["contents"][0]
    assert base64.b64decode(blob["contents"][0]["blob"])


async def test_prompts_are_got_with_arguments_and_completed_over_http(everything_url: str) -> None:
    async with everything(everything_url) as client:
        prompts = {p["name"] for p in await client.list_all_prompts()}
        simple = await client.get_prompt("simple-prompt")
        args = await client.get_prompt("args-prompt", {"city": "Oslo", "state": "Viken"})
        completion = await client.complete(
            {"type": "ref/prompt", "name": "completable-prompt"}, "department", "E"
        )
        await client.ping()
    assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts and simple["messages"]
    assert "Oslo" in str(args["messages"])
    assert "Engineering" in completion["values"]


async def test_simulated_logging_reaches_the_client_over_http(everything_url: str) -> None:
    logs: list[dict[str, Any]] = []
    async with everything(everything_url, on_log=logs.append) as client:
        await client.set_logging_level("debug")
        await client.call_tool("toggle-simulated-logging", {})
        with anyio.fail_after(20):
            while not logs:
                await anyio.sleep(0.1)
        await client.call_tool("toggle-simulated-logging", {})
    assert logs[0].get("level")
