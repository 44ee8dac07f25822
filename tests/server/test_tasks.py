"""The tasks extension (2026-07-28, io.modelcontextprotocol/tasks) served by mcpkit's Server and followed
by mcpkit's Client, in memory through real JSON bytes: creation, polling, input inside a task, the
multi round-trip phase before one, cancellation, failure shapes, and the spec's errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.client.tasks import DECLARE_TASKS, TaskFailed
from mcpkit.protocol.errors import INTERNAL_ERROR, MCPError, RemoteError
from mcpkit.server.tasks import TaskEngine
from mcpkit.testing import connect
from spec_schema import available, problems

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


class Seen:
    def __init__(self) -> None:
        self.cancelled = anyio.Event()
        self.legs = 0


def build(seen: Seen, **engine: Any) -> Server:
    server = Server("tasks", tasks=TaskEngine(**engine) if engine else None)

    @server.tool(task=True)
    async def slow(seconds: float) -> str:
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            seen.cancelled.set()
            raise
        return f"slept {seconds}"

    @server.tool(task="required")
    async def must() -> str:
        return "as a task"

    @server.tool(task=True)
    async def confirm(ctx: Context) -> str:
        seen.legs += 1
        answer = await ctx.elicit("sure?", CONFIRM)
        return f"ok={(answer.content or {}).get('ok')}"

    @server.tool(task=True)
    async def both(ctx: Context) -> str:
        answers = await ctx.request_input(
            {
                "a": {
                    "method": "elicitation/create",
                    "params": {"message": "a?", "requestedSchema": CONFIRM},
                },
                "b": {
                    "method": "elicitation/create",
                    "params": {"message": "b?", "requestedSchema": CONFIRM},
                },
            }
        )
        return ",".join(sorted(answers))

    @server.tool(task=True)
    def broken() -> str:
        raise ValueError("tool trouble")

    @server.tool(task=True)
    async def crashed() -> str:
        raise MCPError(INTERNAL_ERROR, "protocol trouble")

    @server.tool(task="required", ask_first=True)
    async def named(ctx: Context) -> str:
        answer = await ctx.elicit("name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        await ctx.as_task()
        await anyio.sleep(0.05)
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool()
    def plain() -> str:
        return "plain"

    return server


async def yes(_params: JSON) -> JSON:
    return {"action": "accept", "content": {"ok": True, "name": "Ada"}}


@requirement("tasks-ext-durable-create")
async def test_a_task_tool_called_with_the_extension_answers_a_task_and_then_its_result() -> None:
    async with connect(build(Seen()), era="modern") as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 0.1})
        assert handle.task_id is not None and handle.status == "working"
        assert handle.task["resultType"] == "task" and "result" not in handle.task
        assert isinstance(handle.task["ttlMs"], int) and isinstance(handle.task["pollIntervalMs"], int)
        assert handle.task["createdAt"].endswith("Z")
        assert (await handle.refresh())["status"] == "working"  # durably created: found at once
        result = await handle.result()
        assert result["content"][0]["text"] == "slept 0.1"
        assert handle.status == "completed" and handle.task["resultType"] == "complete"


async def test_a_completed_tasks_result_is_a_2026_call_tool_result_with_its_result_type() -> None:
    """Issue 31 item 21: the schema's CallToolResult requires resultType (the TS tasks client checks it)."""
    if not available("2026-07-28"):
        pytest.skip("the 2026-07-28 schema is not in ../shared/spec")
    async with connect(build(Seen()), era="modern") as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 0.01})
        await handle.result()
        got = await handle.refresh()
    assert got["status"] == "completed" and got["result"]["resultType"] == "complete"
    assert problems("2026-07-28", "CallToolResult", got["result"]) == []


@requirement("tasks-ext-gated")
async def test_without_the_extension_an_optional_tool_answers_at_once_and_a_required_one_is_32021() -> None:
    async with connect(build(Seen()), era="modern") as client:
        assert (await client.call_tool("slow", {"seconds": 0}))["content"][0]["text"] == "slept 0.0"
        with pytest.raises(RemoteError) as refused:
            await client.call_tool("must")
        assert refused.value.code == -32021
        assert refused.value.data == {
            "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        }
        plain = await client.call_tool_as_task("plain")
        assert plain.task_id is None and (await plain.result())["content"][0]["text"] == "plain"


async def test_input_inside_a_task_is_asked_through_the_task_and_answered_with_tasks_update() -> None:
    seen = Seen()
    async with connect(build(seen), era="modern", elicitation=yes) as client:
        handle = await client.call_tool_as_task("confirm")
        with anyio.fail_after(5):
            while (await handle.refresh())["status"] != "input_required":
                await anyio.sleep(0.01)
        ((_key, request),) = handle.task["inputRequests"].items()
        assert request["method"] == "elicitation/create" and request["params"]["message"] == "sure?"
        assert (await handle.result())["content"][0]["text"] == "ok=True"
    assert seen.legs == 2  # asked, parked; answered, run again from the top


@requirement("tasks-ext-update-partial")
async def test_a_partial_answer_keeps_the_task_waiting_for_the_rest() -> None:
    async with connect(build(Seen()), era="modern", elicitation=yes) as client:
        handle = await client.call_tool_as_task("both")
        with anyio.fail_after(5):
            while (await handle.refresh())["status"] != "input_required":
                await anyio.sleep(0.01)
        assert sorted(handle.task["inputRequests"]) == ["a", "b"]
        update = {
            "taskId": handle.task_id,
            "inputResponses": {"a": {"action": "accept", "content": {"ok": True}}},
        }
        ack = await client.request("tasks/update", {**update, "_meta": DECLARE_TASKS})
        assert ack.get("resultType") == "complete" and "taskId" not in ack
        again = await handle.refresh()
        assert again["status"] == "input_required" and list(again["inputRequests"]) == ["b"]
        ignored = {"nope": {"action": "accept", "content": {}}, "a": {"action": "decline"}}
        await client.request(
            "tasks/update", {"taskId": handle.task_id, "inputResponses": ignored, "_meta": DECLARE_TASKS}
        )
        assert list((await handle.refresh())["inputRequests"]) == ["b"]  # unknown and answered keys ignored
        last = {"b": {"action": "accept", "content": {"ok": False}}}
        await client.request(
            "tasks/update", {"taskId": handle.task_id, "inputResponses": last, "_meta": DECLARE_TASKS}
        )
        assert (await handle.result())["content"][0]["text"] == "a,b"


async def test_cancel_stops_the_work_and_the_task_stays_cancelled() -> None:
    seen = Seen()
    async with connect(build(seen), era="modern") as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 60})
        await handle.cancel()
        with anyio.fail_after(5):
            await seen.cancelled.wait()
        assert (await handle.refresh())["status"] == "cancelled"
        await handle.cancel()  # idempotent on a terminal task: the same empty ack
        with pytest.raises(TaskFailed, match="cancelled"):
            await handle.result()


async def test_a_tool_error_completes_the_task_and_a_protocol_error_fails_it() -> None:
    async with connect(build(Seen()), era="modern") as client:
        broken = await (await client.call_tool_as_task("broken")).result()
        assert broken["isError"] is True and "tool trouble" in broken["content"][0]["text"]
        crashed = await client.call_tool_as_task("crashed")
        with pytest.raises(TaskFailed) as failed:
            await crashed.result()
        assert failed.value.code == INTERNAL_ERROR and "protocol trouble" in failed.value.message
        task = await crashed.refresh()
        assert task["status"] == "failed" and task["error"]["code"] == INTERNAL_ERROR and "result" not in task


async def test_ask_first_asks_inside_the_request_and_then_becomes_a_task() -> None:
    async with connect(build(Seen()), era="modern", elicitation=yes) as client:
        handle = await client.call_tool_as_task("named")  # round 1 answered by the client, round 2: a task
        assert handle.task_id is not None and "requestState" not in handle.task
        assert (await handle.result())["content"][0]["text"] == "Hello, Ada!"


async def test_unknown_ids_and_undeclared_clients_get_the_spec_errors() -> None:
    async with connect(build(Seen()), era="modern") as client:
        for method in ("tasks/get", "tasks/cancel"):
            with pytest.raises(RemoteError) as unknown:
                await client.request(method, {"taskId": "nope", "_meta": DECLARE_TASKS})
            assert unknown.value.code == -32602
            with pytest.raises(RemoteError) as undeclared:
                await client.request(method, {"taskId": "nope"})
            assert undeclared.value.code == -32021


async def test_unfinished_tasks_are_capped_and_expired_ones_are_gone() -> None:
    async with connect(build(Seen(), max_live_per_owner=1, ttl_ms=300), era="modern") as client:
        first = await client.call_tool_as_task("slow", {"seconds": 60})
        with pytest.raises(RemoteError) as busy:
            await client.call_tool_as_task("slow", {"seconds": 60})
        assert busy.value.code == -32010
        await first.cancel()
        done = await client.call_tool_as_task("slow", {"seconds": 0})
        await done.result()
        await anyio.sleep(0.4)
        with pytest.raises(RemoteError) as expired:
            await done.refresh()
        assert expired.value.code == -32602


async def test_a_caller_cancelled_while_following_a_task_cancels_the_task() -> None:
    seen = Seen()
    async with connect(build(seen), era="modern") as client:
        handle = await client.call_tool_as_task("slow", {"seconds": 60})
        with anyio.move_on_after(0.2):
            await handle.result()
        with anyio.fail_after(5):
            await seen.cancelled.wait()
        assert (await handle.refresh())["status"] == "cancelled"
