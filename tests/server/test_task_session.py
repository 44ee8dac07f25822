"""A 2025-11-25 task that talks to the client while it runs, driven by a raw JSON-RPC client over an
in-memory stream so every message the server sends is seen and checked against the 2025-11-25 schema:
its elicitation is tagged with the task and the task is input_required until it is answered, and its
progress goes on the creating request's progressToken until the task ends."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.runtime.stream import MemoryStream, Outgoing, memory_pair
from spec_schema import available, problems

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not available("2025-11-25"), reason="needs ../shared/spec beside the checkout"),
]
V = "2025-11-25"
JSON = dict[str, Any]
RELATED = "io.modelcontextprotocol/related-task"
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
KINDS = {
    "notifications/tasks/status": "TaskStatusNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "elicitation/create": "ElicitRequest",
}


def build(later: anyio.Event) -> Server:
    server = Server("task-session")

    @server.tool(task=True)
    async def steps(ctx: Context) -> str:
        await ctx.report_progress(1, 3)
        answer = await ctx.elicit("go on?", SCHEMA)
        await ctx.report_progress(2, 3, "answered")
        await later.wait()  # the client has seen `working` again, long after tools/call was answered
        await ctx.report_progress(3, 3)
        return f"ok={(answer.content or {}).get('ok')}"

    return server


class Raw:
    """A 2025-11-25 client end that writes raw messages and checks every one the server sends."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream

    async def send(self, message: JSON) -> None:
        await self.stream.send(Outgoing(orjson.dumps({"jsonrpc": "2.0", **message})))

    async def next(self) -> JSON:
        with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
            data = await self.stream.receive()
        assert isinstance(data, bytes)
        message: JSON = orjson.loads(data)
        kind = KINDS.get(message.get("method", ""))
        assert kind is None or problems(V, kind, message) == [], message
        return message

    async def until(self, done: Any) -> list[JSON]:
        seen: list[JSON] = []
        while not seen or not done(seen[-1]):
            seen.append(await self.next())
        return seen


def status(message: JSON) -> str | None:
    if message.get("method") == "notifications/tasks/status":
        return str(message["params"]["status"])
    return None


@requirement("tasks-utility-related-input")
async def test_a_task_asking_the_client_is_input_required_until_answered_and_keeps_its_progress() -> None:
    later = anyio.Event()
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(build(later).serve, server_end)
        raw = Raw(client_end)
        info = {"name": "raw", "version": "1"}
        init = {"protocolVersion": V, "capabilities": {"elicitation": {}}, "clientInfo": info}
        await raw.send({"id": 1, "method": "initialize", "params": init})
        assert (await raw.next())["result"]["protocolVersion"] == V
        await raw.send({"method": "notifications/initialized"})
        call = {"name": "steps", "arguments": {}, "task": {}, "_meta": {"progressToken": "p"}}
        await raw.send({"id": 2, "method": "tools/call", "params": call})
        seen = await raw.until(lambda m: m.get("method") == "elicitation/create")
        task_id = next(m for m in seen if m.get("id") == 2)["result"]["task"]["taskId"]
        ask = seen[-1]
        assert ask["params"]["_meta"][RELATED] == {"taskId": task_id}  # MUST: tagged with its task
        assert [status(m) for m in seen if status(m)] == ["input_required"]
        await raw.send({"id": ask["id"], "result": {"action": "accept", "content": {"ok": True}}})
        seen += await raw.until(lambda m: status(m) == "working")
        later.set()
        seen += await raw.until(lambda m: status(m) == "completed")
        await client_end.aclose()
        tg.cancel_scope.cancel()
    assert [status(m) for m in seen if status(m)] == ["input_required", "working", "completed"]
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"]) for p in progress] == [("p", 1), ("p", 2), ("p", 3)]
    assert all(p["_meta"][RELATED] == {"taskId": task_id} for p in progress)
