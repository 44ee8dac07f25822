"""mcpkit's client against the TypeScript reference server `@modelcontextprotocol/server-everything`.

CI installs it into .interop/npm (scripts/setup-peers); MCPKIT_EVERYTHING_SERVER names its dist/index.js.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client, connect_stdio

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / ".interop/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SERVER = Path(os.environ.get("MCPKIT_EVERYTHING_SERVER", DEFAULT))


def sample_value(schema: dict[str, Any]) -> Any:
    """A value that satisfies one property of a flat requestedSchema."""
    if "enum" in schema:
        return schema["enum"][0]
    if "oneOf" in schema:
        return schema["oneOf"][0]["const"]
    if schema.get("type") == "array":
        items = schema.get("items", {})
        options = items.get("enum") or [o["const"] for o in items.get("anyOf", [])]
        return options[:1]
    kind, fmt = schema.get("type"), schema.get("format", "")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    return {
        "email": "ada@example.com",
        "uri": "https://example.com",
        "date": "2026-01-02",
        "date-time": "2026-01-02T03:04:05Z",
    }.get(fmt, "answer")


def elicit(params: dict[str, Any]) -> dict[str, Any]:
    properties = params["requestedSchema"]["properties"]
    return {"action": "accept", "content": {name: sample_value(p) for name, p in properties.items()}}


SAMPLED: list[dict[str, Any]] = []


def sample(params: dict[str, Any]) -> dict[str, Any]:
    SAMPLED.append(params)
    return {"role": "assistant", "model": "mcpkit-test", "content": {"type": "text", "text": "sampled words"}}


@asynccontextmanager
async def everything(**options: Any) -> AsyncIterator[Client]:
    if not SERVER.is_file() or shutil.which("node") is None:
        pytest.skip(f"server-everything is not installed at {SERVER} (scripts/setup-peers installs it)")
    async with connect_stdio(
        ["node", str(SERVER), "stdio"],
        sampling=sample,
        elicitation=elicit,
        roots=[{"uri": "file:///tmp/project", "name": "project"}],
        stderr=subprocess.DEVNULL,
        timeout=30,
        **options,
    ) as client:
        yield client


ARGUMENTS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hello"},
    "get-annotated-message": {"messageType": "success", "includeImage": True},
    "get-resource-links": {"count": 2},
    "get-resource-reference": {"resourceType": "Text", "resourceId": 1},
    "get-structured-content": {"location": "New York"},
    "get-sum": {"a": 2, "b": 3},
    "gzip-file-as-resource": {
        "name": "hi.gz",
        "data": "data:text/plain;base64," + base64.b64encode(b"hi").decode(),
        "outputType": "resource",
    },
    "trigger-long-running-operation": {"duration": 0.3, "steps": 3},
    "trigger-sampling-request": {"prompt": "say something", "maxTokens": 20},
    "simulate-research-query": {"topic": "tides", "ambiguous": False},
}


async def test_every_tool_can_be_listed_and_called() -> None:
    async with everything() as client:
        tools = await client.list_all_tools()
        names = [t["name"] for t in tools]
        assert {
            "echo",
            "get-sum",
            "trigger-sampling-request",
            "trigger-elicitation-request",
            "get-roots-list",
        } <= set(names)
        failures = {}
        # Tools that require task augmentation (2025-11-25 experimental tasks) belong to the tasks extension.
        task_only = {t["name"] for t in tools if t.get("execution", {}).get("taskSupport") == "required"}
        for tool in tools:
            if tool["name"] in task_only:
                continue
            arguments = dict(ARGUMENTS.get(tool["name"], {}))
            if tool["name"] == "get-resource-reference":
                kinds = tool["inputSchema"]["properties"]["resourceType"].get("enum", ["Text"])
                arguments["resourceType"] = kinds[0]
            result = await client.call_tool(tool["name"], arguments)
            if result.get("isError") or not result.get("content"):
                failures[tool["name"]] = result
        assert failures == {}
        assert len(names) - len(task_only) >= 15


async def test_tool_results_reflect_what_the_client_answered() -> None:
    SAMPLED.clear()
    async with everything() as client:
        total = await client.call_tool("get-sum", {"a": 2, "b": 3})
        sampled = await client.call_tool(
            "trigger-sampling-request", {"prompt": "say something", "maxTokens": 20}
        )
        roots = await client.call_tool("get-roots-list", {})
        elicited = await client.call_tool("trigger-elicitation-request", {})
    assert "5" in total["content"][0]["text"]
    assert "sampled words" in str(sampled["content"]) and SAMPLED and SAMPLED[0]["maxTokens"] == 20
    assert "file:///tmp/project" in str(roots["content"])
    assert "ada@example.com" in str(elicited["content"])


async def test_progress_arrives_for_the_long_running_operation() -> None:
    seen: list[float] = []
    async with everything() as client:
        await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            on_progress=lambda p, t, m: seen.append(p),
        )
    assert seen == sorted(seen) and len(seen) == 3


async def test_structured_content_is_checked_against_the_output_schema() -> None:
    async with everything() as client:
        await client.list_tools()
        result = await client.call_tool("get-structured-content", {"location": "New York"})
    assert isinstance(result["structuredContent"], dict) and result["structuredContent"]


async def test_resources_templates_and_blobs_can_be_read() -> None:
    async with everything() as client:
        resources = await client.list_all_resources()
        templates = await client.list_all_resource_templates()
        assert resources and templates
        for resource in resources:
            contents = (await client.read_resource(resource["uri"]))["contents"]
            assert contents and ("text" in contents[0] or "blob" in contents[0])
        text = await client.read_resource("demo://resource/dynamic/text/3")
        blob = await client.read_resource("demo://resource/dynamic/blob/3")
    assert "text" in text["contents"][0]
    assert base64.b64decode(blob["contents"][0]["blob"])


async def test_every_prompt_can_be_got_with_its_arguments() -> None:
    values = {
        "city": "Oslo",
        "state": "Viken",
        "department": "Engineering",
        "name": "Alice",
        "resourceType": "Text",
        "resourceId": "1",
    }
    async with everything() as client:
        prompts = await client.list_all_prompts()
        for prompt in prompts:
            arguments = {a["name"]: values.get(a["name"], "x") for a in prompt.get("arguments", [])}
            result = await client.get_prompt(prompt["name"], arguments)
            assert result["messages"], prompt["name"]


async def test_completion_logging_and_ping() -> None:
    logs: list[dict[str, Any]] = []
    async with everything(on_log=logs.append) as client:
        completion = await client.complete(
            {"type": "ref/prompt", "name": "completable-prompt"}, "department", "E"
        )
        await client.set_logging_level("debug")
        await client.call_tool("toggle-simulated-logging", {})
        await client.ping()
    assert "Engineering" in completion["values"]
