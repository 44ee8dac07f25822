"""Task status notifications, served by mcpkit's Server and heard by mcpkit's Client in memory (through
real JSON bytes): the 2025-11-25 `notifications/tasks/status` to the session that created the task, and
the extension's `notifications/tasks` on a subscriptions/listen stream that names the task, each one
checked against its schema."""

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
    pytest.mark.skipif(not available("2025-11-25"), reason="needs ../shared/spec beside the checkout"),
]
V = "2025-11-25"
JSON = dict[str, Any]
RELATED = "io.modelcontextprotocol/related-task"


def build(release: anyio.Event) -> Server:
    server = Server("task-notices")

    @server.tool(task=True)
    async def wait() -> str:
        await release.wait()
        return "released"

    return server


class Heard:
    """Status notifications as the client hears them, raw and through on_task_status."""

    def __init__(self) -> None:
        self.raw: list[JSON] = []
        self.hooked: list[JSON] = []
        self.changed = anyio.Event()

    async def notification(self, method: str, params: JSON) -> None:
        if method == "notifications/tasks/status":
            self.raw.append({"jsonrpc": "2.0", "method": method, "params": params})

    def hook(self, task: JSON) -> None:
        self.hooked.append(task)
        self.changed.set()

    async def status(self, status: str) -> JSON:
        with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
            while not any(t["status"] == status for t in self.hooked):
                await self.changed.wait()
                self.changed = anyio.Event()
        return next(t for t in self.hooked if t["status"] == status)


async def test_the_creating_session_hears_each_status_change_as_a_schema_valid_notification() -> None:
    release, heard = anyio.Event(), Heard()
    options: JSON = {"on_notification": heard.notification, "on_task_status": heard.hook}
    async with connect(build(release), protocol_version=V, **options) as client:
        handle = await client.call_tool_as_task("wait")
        assert heard.hooked == []  # the CreateTaskResult reports `working`; nothing has changed yet
        release.set()
        task = await heard.status("completed")
        assert task["taskId"] == handle.task_id and handle.status == "completed"  # without a tasks/get
        assert (await handle.result())["content"][0]["text"] == "released"
    assert heard.raw and all(problems(V, "TaskStatusNotification", note) == [] for note in heard.raw)
    assert all(RELATED not in note["params"].get("_meta", {}) for note in heard.raw)  # "SHOULD NOT"


async def test_a_cancel_is_heard_as_a_cancelled_status() -> None:
    release, heard = anyio.Event(), Heard()
    async with connect(build(release), protocol_version=V, on_task_status=heard.hook) as client:
        handle = await client.call_tool_as_task("wait")
        await handle.cancel()
        task = await heard.status("cancelled")
        assert task["taskId"] == handle.task_id and handle.status == "cancelled"
        assert problems(V, "Task", task) == []


async def test_another_session_hears_nothing_of_a_task_it_did_not_create() -> None:
    release, mine, theirs = anyio.Event(), Heard(), Heard()
    server = build(release)
    async with (
        connect(server, protocol_version=V, on_task_status=mine.hook) as client,
        connect(server, protocol_version=V, on_task_status=theirs.hook) as other,
    ):
        handle = await client.call_tool_as_task("wait")
        release.set()
        await mine.status("completed")
        await other.ping()
        assert theirs.hooked == [] and handle.task_id is not None


# ---- 2026-07-28: notifications/tasks on subscriptions/listen (the tasks extension) ------------

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def build_modern(release: anyio.Event) -> Server:
    server = build(release)

    @server.tool(task=True)
    async def confirm(ctx: Context) -> str:
        await ctx.elicit("sure?", CONFIRM)
        return "confirmed"

    return server


async def sure(_params: JSON) -> JSON:
    return {"action": "accept", "content": {"ok": True}}


def ext_valid(method: str, params: JSON) -> JSON:
    note = {"jsonrpc": "2.0", "method": method, "params": params}
    assert problems("ext-tasks", "TaskStatusNotification", note) == []
    return params


async def test_a_listen_stream_naming_a_task_carries_its_detailed_state_until_it_ends() -> None:
    release = anyio.Event()
    async with connect(build_modern(release), era="modern") as client:
        handle = await client.call_tool_as_task("wait")
        assert handle.task_id is not None
        async with client.listen(tasks=[handle.task_id, "not-a-task"]) as stream:
            assert stream.acknowledged == {"taskIds": [handle.task_id]}  # only the caller's own tasks
            seen: list[JSON] = []
            with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
                async for method, params in stream:
                    seen.append(ext_valid(method, params))
                    if params["status"] == "working":
                        release.set()  # the state when the stream opened comes first
                    if params["status"] == "completed":
                        break
        assert [n["status"] for n in seen] == ["working", "completed"]
        assert seen[-1]["result"]["content"][0]["text"] == "released"  # the DetailedTask, inlined
        assert all(n["_meta"]["io.modelcontextprotocol/subscriptionId"] is not None for n in seen)
        assert handle.status == "completed"  # the handle heard it too, without a tasks/get


async def test_an_input_required_notification_carries_the_outstanding_requests() -> None:
    async with connect(build_modern(anyio.Event()), era="modern", elicitation=sure) as client:
        handle = await client.call_tool_as_task("confirm")
        assert handle.task_id is not None
        async with client.listen(tasks=[handle.task_id]) as stream:
            with anyio.fail_after(10):
                async for method, params in stream:
                    if ext_valid(method, params)["status"] == "input_required":
                        break
        ((_key, request),) = params["inputRequests"].items()
        assert request["method"] == "elicitation/create" and request["params"]["message"] == "sure?"
        await handle.cancel()


@requirement("tasks-ext-listen-gated")
async def test_asking_for_task_notifications_without_the_extension_is_32021() -> None:
    async with connect(build_modern(anyio.Event()), era="modern") as client:
        with pytest.raises(RemoteError) as refused:
            await client.request("subscriptions/listen", {"notifications": {"taskIds": ["any"]}})
        assert refused.value.code == -32021
        assert refused.value.data == {
            "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        }
