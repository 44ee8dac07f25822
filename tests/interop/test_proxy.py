"""mcpkit's proxy in front of `@modelcontextprotocol/server-everything` (stdio), served over Streamable
HTTP by uvicorn, with the official `mcp` SDK client on the far side: every tool, sampling, elicitation,
roots, progress, resources, prompts, completion and logging go through the proxy both ways."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from pydantic import FileUrl
from test_server_everything import ARGUMENTS, SERVER, sample_value

from mcpkit.client import connect_http
from mcpkit.protocol.levels import LEVELS
from mcpkit.proxy import open_proxy
from mcpkit.transports.http_server import StreamableHTTPApp
from peers import serving

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
warnings.filterwarnings("ignore", category=UserWarning)


# the proxy declares URL elicitation to the remote (it cannot know its clients'), which adds this tool
MORE_ARGUMENTS = {**ARGUMENTS, "trigger-url-elicitation": {"url": "https://example.com/consent"}}


class Far:
    """The far client's callbacks, and what they saw."""

    def __init__(self) -> None:
        self.sampled: list[types.CreateMessageRequestParams] = []
        self.elicited: list[types.ElicitRequestParams] = []
        self.roots_asked = 0
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampled.append(params)
        text = types.TextContent(type="text", text="words from the far client")
        return types.CreateMessageResult(
            role="assistant", content=text, model="far-model", stop_reason="endTurn"
        )

    async def elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicited.append(params)
        if not isinstance(params, types.ElicitRequestFormParams):
            return types.ElicitResult(action="decline")
        properties = params.requested_schema["properties"]
        return types.ElicitResult(
            action="accept", content={k: sample_value(p) for k, p in properties.items()}
        )

    async def list_roots(self, context: Any) -> types.ListRootsResult:
        self.roots_asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///far/project"), name="far")])

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)


@asynccontextmanager
async def proxied() -> AsyncIterator[str]:
    """server-everything over stdio behind the proxy, the proxy on uvicorn; yields its URL."""
    if not SERVER.is_file() or shutil.which("node") is None:
        pytest.skip(f"server-everything is not installed at {SERVER} (scripts/setup installs it)")
    with anyio.fail_after(60):
        async with (
            open_proxy(["node", str(SERVER), "stdio"]) as server,
            serving(StreamableHTTPApp(server)) as url,
        ):
            yield url


@asynccontextmanager
async def far_session(url: str, far: Far) -> AsyncIterator[ClientSession]:
    async with (
        streamable_http_client(url) as streams,
        ClientSession(
            streams[0],
            streams[1],
            sampling_callback=far.sampling,
            elicitation_callback=far.elicitation,
            list_roots_callback=far.list_roots,
            logging_callback=far.logging,
        ) as session,
    ):
        await session.initialize()
        yield session


async def all_tools(session: ClientSession) -> list[types.Tool]:
    tools, cursor = [], None
    while True:
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def text_of(result: types.CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_every_server_everything_tool_is_called_through_the_proxy() -> None:
    far = Far()
    async with proxied() as url, far_session(url, far) as session:
        assert session.server_info is not None and session.server_info.name == "mcp-servers/everything"
        tools = await all_tools(session)
        task_only = {
            t.name for t in tools if t.execution is not None and t.execution.task_support == "required"
        }
        failures: dict[str, Any] = {}
        for tool in tools:
            if tool.name in task_only:
                continue
            result = await session.call_tool(tool.name, dict(MORE_ARGUMENTS.get(tool.name, {})))
            if result.is_error or not result.content:
                failures[tool.name] = result
        # the SDK client has no tasks API: mcpkit's client calls the task-only tools through the proxy
        async with connect_http(url, era="handshake") as client:
            for name in sorted(task_only):
                handle = await client.call_tool_as_task(name, ARGUMENTS.get(name, {}))
                with anyio.fail_after(30):
                    finished = await handle.result()
                if finished.get("isError") or not finished.get("content"):
                    failures[name] = finished
    assert failures == {}
    assert len(tools) >= 16 and task_only == {"simulate-research-query"}
    assert far.sampled and far.elicited and far.roots_asked  # the tools that ask reached the far client


async def test_sampling_elicitation_and_roots_round_trip_through_the_proxy() -> None:
    far = Far()
    async with proxied() as url, far_session(url, far) as session:
        sampled = await session.call_tool("trigger-sampling-request", {"prompt": "a haiku", "maxTokens": 21})
        elicited = await session.call_tool("trigger-elicitation-request", {})
        roots = await session.call_tool("get-roots-list", {})
    assert "words from the far client" in text_of(sampled) and "far-model" in text_of(sampled)
    assert far.sampled[0].max_tokens == 21
    assert "a haiku" in str(far.sampled[0].messages[0].content)
    assert far.elicited and "ada@example.com" in text_of(elicited)
    assert "file:///far/project" in text_of(roots)


async def test_progress_of_the_remote_reaches_the_far_client() -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with proxied() as url, far_session(url, Far()) as session:
        result = await session.call_tool(
            "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress_callback=on_progress
        )
    assert not result.is_error
    assert seen == [(1, 3), (2, 3), (3, 3)]


async def test_resources_prompts_completion_and_logging_go_through_the_proxy() -> None:
    far = Far()
    async with proxied() as url, far_session(url, far) as session:
        resources = (await session.list_resources()).resources
        first = await session.read_resource(resources[0].uri)
        templates = (await session.list_resource_templates()).resource_templates
        dynamic = await session.read_resource(templates[0].uri_template.replace("{resourceId}", "3"))
        prompts = {p.name for p in (await session.list_prompts()).prompts}
        prompt = await session.get_prompt("args-prompt", {"city": "Lyon"})
        completed = await session.complete(
            types.PromptReference(type="ref/prompt", name="completable-prompt"),
            {"name": "department", "value": "E"},
        )
        await session.set_logging_level("debug")
        await session.call_tool("toggle-simulated-logging", {})
        with anyio.fail_after(20):
            while not far.logs:
                await session.send_ping()
                await anyio.sleep(0.1)
    assert first.contents and str(first.contents[0].uri) == str(resources[0].uri)
    assert dynamic.contents and "3" in str(dynamic.contents[0].uri)
    assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts
    assert "Lyon" in str(prompt.messages[0].content)
    assert "Engineering" in completed.completion.values
    assert far.logs[0].level in LEVELS


@asynccontextmanager
async def sdk_2026_client(url: str, far: Far) -> AsyncIterator[Any]:
    """The official SDK's 2026-07-28 client, its sampling, elicitation and roots answered by `far`."""
    from mcp import Client as SdkClient

    sdk = SdkClient(
        url,
        mode="2026-07-28",
        sampling_callback=far.sampling,
        elicitation_callback=far.elicitation,
        list_roots_callback=far.list_roots,
    )
    async with sdk as client:
        yield client


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_2026_sdk_client_answers_the_old_servers_requests_in_input_required_rounds(
    anyio_backend: str,
) -> None:
    far = Far()
    async with proxied() as url, sdk_2026_client(url, far) as client:
        assert client.protocol_version == "2026-07-28"
        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "a haiku", "maxTokens": 21})
        elicited = await client.call_tool("trigger-elicitation-request", {})
        roots = await client.call_tool("get-roots-list", {})
    assert isinstance(sampled, types.CallToolResult) and "words from the far client" in text_of(sampled)
    assert isinstance(elicited, types.CallToolResult) and "ada@example.com" in text_of(elicited)
    assert isinstance(roots, types.CallToolResult) and "file:///far/project" in text_of(roots)
    assert far.sampled[0].max_tokens == 21


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_2026_sdk_client_calls_every_tool_of_the_old_server_through_the_proxy(
    anyio_backend: str,
) -> None:
    far = Far()
    async with proxied() as url, sdk_2026_client(url, far) as client:
        tools = (await client.list_tools()).tools
        failures: dict[str, Any] = {}
        for tool in tools:
            if tool.execution is not None and tool.execution.task_support == "required":
                continue  # the tasks extension: called by mcpkit's client in the first test
            result = await client.call_tool(tool.name, dict(MORE_ARGUMENTS.get(tool.name, {})))
            if not isinstance(result, types.CallToolResult) or result.is_error or not result.content:
                failures[tool.name] = result
    assert failures == {}
    assert len(tools) >= 16
