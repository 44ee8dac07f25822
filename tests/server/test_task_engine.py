"""The task engine as a part of the Server beside its registry and peers: a tasks/result in one process
wakes on the task's change instead of reading the store over and over, a leg's outcome is a value the
engine matches, and an answer for a task whose tool is gone fails the task."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit import Context, Server
from mcpkit.client.tasks import DECLARE_TASKS
from mcpkit.server.round_trip import InputRequired
from mcpkit.server.tasks import InMemoryTaskStore, TaskEngine, TaskRecord
from mcpkit.server.tasks.changes import settled
from mcpkit.server.tasks.legs import Cancelled, Failed, NeedsInput, Result
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


class CountedStore(InMemoryTaskStore):
    """The default store, counting how often a task is read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def get(self, task_id: str) -> TaskRecord | None:
        self.reads += 1
        return await super().get(task_id)


async def test_tasks_result_in_one_process_waits_for_the_change_instead_of_reading_the_store_again() -> None:
    store, gate = CountedStore(), anyio.Event()
    server = Server("one-process", tasks=TaskEngine(store))

    @server.tool(task=True)
    async def gated() -> str:
        await gate.wait()
        return "through"

    async with connect(server, protocol_version="2025-11-25") as client:
        created = await client.request("tools/call", {"name": "gated", "arguments": {}, "task": {}})
        task_id = created["task"]["taskId"]
        answers: list[JSON] = []
        async with anyio.create_task_group() as tg:

            async def result() -> None:
                answers.append(await client.request("tasks/result", {"taskId": task_id}))

            before = store.reads
            tg.start_soon(result)
            await anyio.sleep(0.3)  # six polls of the store, had it polled
            while_waiting = store.reads - before
            gate.set()
    assert answers[0]["content"] == [{"type": "text", "text": "through"}]
    assert while_waiting <= 2  # the request's look-up, and one read before it waits


async def test_an_answer_for_a_task_whose_tool_was_removed_fails_the_task() -> None:
    async def yes(_params: JSON) -> JSON:
        return {"action": "accept", "content": {"ok": True}}

    server = Server("removed")

    @server.tool(task=True)
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("sure?", CONFIRM)
        return f"ok={(answer.content or {}).get('ok')}"

    async with connect(server, era="modern", elicitation=yes) as client:
        handle = await client.call_tool_as_task("confirm")
        with anyio.fail_after(5):
            while (await handle.refresh())["status"] != "input_required":
                await anyio.sleep(0.01)
        server.remove_tool("confirm")
        ((key, _request),) = handle.task["inputRequests"].items()
        answer = {key: {"action": "accept", "content": {"ok": True}}}
        update = {"taskId": handle.task_id, "inputResponses": answer, "_meta": DECLARE_TASKS}
        await client.request("tasks/update", update)
        task = await handle.refresh()
    assert task["status"] == "failed" and "'confirm' is gone" in task["error"]["message"]


def record() -> TaskRecord:
    return TaskRecord(
        "t", None, "tool", None, {}, "2026-07-28", created_at=0.0, ttl_ms=None, poll_interval_ms=1
    )


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        (Result({"content": []}), "completed"),
        (NeedsInput(InputRequired({"k": {"method": "roots/list"}}, {})), "input_required"),
        (Failed({"code": -32603, "message": "Internal error"}), "failed"),
        (Cancelled(), "cancelled"),
    ],
)
def test_each_outcome_of_a_leg_moves_its_task_to_its_own_status(outcome: Any, status: str) -> None:
    task = record()
    assert settled(0, outcome)(task) and task.status.value == status
