"""The 2025-11-25 tasks utility served by mcpkit's Server, in memory through real JSON bytes, each result
checked against that version's schema: capabilities and execution.taskSupport, task-augmented
tools/call, tasks/get, the blocking tasks/result, tasks/list, tasks/cancel, and the spec's errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.protocol.errors import RemoteError
from mcpkit.testing import connect
from spec_schema import available, problems

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.both_loops,
    pytest.mark.skipif(not available("2025-11-25"), reason="needs ../shared/spec beside the checkout"),
]
V = "2025-11-25"
JSON = dict[str, Any]


def build() -> Server:
    server = Server("tasks-2025")

    @server.tool(task=True)
    async def bake(minutes: float) -> str:
        await anyio.sleep(minutes)
        return f"baked {minutes}"

    @server.tool(task="required")
    async def only_task() -> str:
        return "tasked"

    @server.tool(task=True)
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("ok?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"ok={(answer.content or {}).get('ok')}"

    @server.tool(task=True)
    def fails() -> str:
        raise ValueError("bad batch")

    @server.tool()
    def plain() -> str:
        return "plain"

    return server


async def yes(_params: JSON) -> JSON:
    return {"action": "accept", "content": {"ok": True}}


def valid(definition: str, instance: JSON) -> JSON:
    assert problems(V, definition, instance) == []
    return instance


@requirement("tasks-utility-result")
async def test_a_task_augmented_call_answers_a_task_and_tasks_result_its_result() -> None:
    async with connect(build(), protocol_version=V) as client:
        assert client.server_capabilities["tasks"] == {
            "list": {},
            "cancel": {},
            "requests": {"tools": {"call": {}}},
        }
        tools = {t["name"]: t for t in (await client.list_tools())["tools"]}
        assert tools["bake"]["execution"] == {"taskSupport": "optional"} and "execution" not in tools["plain"]
        created = valid(
            "CreateTaskResult", await client.request("tools/call", call("bake", {"minutes": 0.1}))
        )
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] <= 3_600_000 and "ttlMs" not in task
        assert valid("GetTaskResult", await client.request("tasks/get", {"taskId": task["taskId"]}))[
            "status"
        ] in (
            "working",
            "completed",
        )
        result = await client.request("tasks/result", {"taskId": task["taskId"]})  # blocks until it ends
        assert result["content"][0]["text"] == "baked 0.1"
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
        listed = valid("ListTasksResult", await client.request("tasks/list"))
        assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]] and listed["tasks"][0][
            "status"
        ] == "completed"


@requirement("tasks-utility-cancel-terminal")
async def test_cancel_answers_the_cancelled_task_and_a_terminal_one_is_32602() -> None:
    async with connect(build(), protocol_version=V) as client:
        task = (await client.request("tools/call", call("bake", {"minutes": 60})))["task"]
        cancelled = valid(
            "CancelTaskResult", await client.request("tasks/cancel", {"taskId": task["taskId"]})
        )
        assert cancelled["status"] == "cancelled"
        with pytest.raises(RemoteError) as again:
            await client.request("tasks/cancel", {"taskId": task["taskId"]})
        assert again.value.code == -32602
        with pytest.raises(RemoteError) as result:
            await client.request("tasks/result", {"taskId": task["taskId"]})
        assert "cancelled" in result.value.message


@requirement("tasks-utility-required")
async def test_task_support_is_enforced_both_ways() -> None:
    async with connect(build(), protocol_version=V) as client:
        with pytest.raises(RemoteError) as forbidden:
            await client.request("tools/call", call("plain", {}))
        assert forbidden.value.code == -32601
        with pytest.raises(RemoteError) as required:
            await client.request("tools/call", {"name": "only_task", "arguments": {}})
        assert required.value.code == -32601
        with pytest.raises(RemoteError) as unknown:
            await client.request("tasks/get", {"taskId": "nope"})
        assert unknown.value.code == -32602


async def test_input_inside_a_task_goes_to_the_client_over_the_session() -> None:
    async with connect(build(), protocol_version=V, elicitation=yes) as client:
        task = (await client.request("tools/call", call("ask", {})))["task"]
        result = await client.request("tasks/result", {"taskId": task["taskId"]})
        assert result["content"][0]["text"] == "ok=True"


@requirement("tasks-utility-tool-error-failed")
async def test_a_tool_error_is_the_tasks_result_and_earlier_versions_have_no_tasks() -> None:
    async with connect(build(), protocol_version=V) as client:
        task = (await client.request("tools/call", call("fails", {})))["task"]
        result = await client.request("tasks/result", {"taskId": task["taskId"]})
        assert result["isError"] is True and "bad batch" in result["content"][0]["text"]
        # 2025-11-25 "Task Status": failed includes a tool call result with isError set to true
        assert (await client.request("tasks/get", {"taskId": task["taskId"]}))["status"] == "failed"
    async with connect(build(), protocol_version="2025-06-18") as older:
        assert "tasks" not in older.server_capabilities
        assert "execution" not in (await older.list_tools())["tools"][0]
        with pytest.raises(RemoteError) as missing:
            await older.request("tasks/get", {"taskId": "x"})
        assert missing.value.code == -32601


@requirement("tasks-utility-list-cursor")
async def test_a_tasks_list_cursor_the_server_did_not_issue_is_32602() -> None:
    async with connect(build(), protocol_version=V) as client:
        assert (await client.request("tasks/list", {}))["tasks"] == []
        for cursor in ("100", "0" * 100_000, "not-ours", 7):
            with pytest.raises(RemoteError) as bad:
                await client.request("tasks/list", {"cursor": cursor})
            assert bad.value.code == -32602
        assert (await client.request("tasks/list", {}))["tasks"] == []  # the session still serves


def call(name: str, arguments: JSON) -> JSON:
    return {"name": name, "arguments": arguments, "task": {"ttl": 999_999_999}}
