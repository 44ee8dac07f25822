"""Tasks over Streamable HTTP in one process: the routing header a tasks/* request must carry, mcpkit's
client following a task over HTTP, and `mcpkit call URL TOOL --task`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import peers
from mcpkit import Context, Server
from mcpkit.client import connect_http
from mcpkit.protocol.errors import SERVER_BUSY, RemoteError
from mcpkit.server.tasks import TaskEngine
from mcpkit.transports.http_server import StreamableHTTPApp
from spec_schema import available, problems

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
# The two tests that check what they hear against the spec's schemas.
SPEC_HERE = available("2025-11-25") and available("ext-tasks")
needs_spec = pytest.mark.skipif(not SPEC_HERE, reason="needs ../shared/spec beside the checkout")
ROOT = Path(__file__).resolve().parents[2]
V = "2026-07-28"
META = "io.modelcontextprotocol/"
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def build() -> Server:
    server = Server("http-tasks")

    @server.tool(task=True)
    async def brew(minutes: float) -> str:
        await anyio.sleep(minutes)
        return f"brewed {minutes}"

    @server.tool(task=True)
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit("sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"ok={(answer.content or {}).get('ok')}"

    return server


def request(method: str, params: dict[str, Any], name: str | None) -> tuple[dict[str, str], bytes]:
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": V,
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    meta = {META + "protocolVersion": V, META + "clientCapabilities": TASKS}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    return headers, json.dumps(body).encode()


async def test_tasks_requests_must_name_their_task_in_mcp_name() -> None:
    async with peers.serving(StreamableHTTPApp(build())) as url, httpx.AsyncClient() as http:
        headers, body = request("tools/call", {"name": "brew", "arguments": {"minutes": 0.05}}, "brew")
        created = (await http.post(url, content=body, headers=headers)).json()["result"]
        task_id = created["taskId"]
        for name in (None, "another-task"):
            headers, body = request("tasks/get", {"taskId": task_id}, name)
            refused = await http.post(url, content=body, headers=headers)
            assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020
        headers, body = request("tasks/get", {"taskId": task_id}, task_id)
        assert (await http.post(url, content=body, headers=headers)).json()["result"]["taskId"] == task_id


async def test_mcpkit_client_follows_a_task_over_http() -> None:
    async with peers.serving(StreamableHTTPApp(build())) as url, connect_http(url) as client:
        handle = await client.call_tool_as_task("brew", {"minutes": 0.1})
        assert handle.task_id is not None
        seen: list[str] = []
        result = await handle.result(on_status=lambda task: seen.append(task["status"]))
        assert result["content"][0]["text"] == "brewed 0.1" and seen[-1] == "completed"


async def test_a_2025_11_25_session_runs_the_same_tool_as_a_task_over_http() -> None:
    async with peers.serving(StreamableHTTPApp(build())) as url:
        async with connect_http(url, protocol_version="2025-11-25") as client:
            assert not client.stateless and "tasks" in client.server_capabilities
            handle = await client.call_tool_as_task("brew", {"minutes": 0.1})
            assert handle.utility and handle.task_id is not None and handle.task["status"] == "working"
            result = await handle.result()
        assert result["content"][0]["text"] == "brewed 0.1"
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": handle.task_id}


async def test_without_authorization_a_2025_task_belongs_to_its_session() -> None:
    async with (
        peers.serving(StreamableHTTPApp(build())) as url,
        connect_http(url, protocol_version="2025-11-25") as mine,
        connect_http(url, protocol_version="2025-11-25") as theirs,
    ):
        handle = await mine.call_tool_as_task("brew", {"minutes": 0.05})
        assert [t["taskId"] for t in (await mine.request("tasks/list"))["tasks"]] == [handle.task_id]
        assert (await theirs.request("tasks/list"))["tasks"] == []  # tasks/list: only the requestor's
        with pytest.raises(RemoteError) as hidden:
            await theirs.request("tasks/get", {"taskId": handle.task_id})
        assert hidden.value.code == -32602


async def test_the_cli_calls_a_tool_as_a_task_and_shows_its_status() -> None:
    async with peers.serving(StreamableHTTPApp(build())) as url:
        command = [sys.executable, "-m", "mcpkit.cli", "call", url, "brew", "minutes=0.3", "--task"]
        env = {"PYTHONPATH": str(ROOT / "src")}
        done = await anyio.to_thread.run_sync(
            lambda: subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        )
    assert done.returncode == 0, done.stderr
    statuses = [line.split(": ")[-1] for line in done.stderr.splitlines() if line.startswith("task ")]
    assert statuses == ["working", "completed"]
    assert "brewed 0.3" in done.stdout


@needs_spec
async def test_a_2025_session_hears_its_tasks_status_over_http() -> None:
    heard: list[dict[str, Any]] = []
    done = anyio.Event()

    def hook(task: dict[str, Any]) -> None:
        heard.append(task)
        if task["status"] == "completed":
            done.set()

    async with (
        peers.serving(StreamableHTTPApp(build())) as url,
        connect_http(url, protocol_version="2025-11-25", on_task_status=hook) as client,
    ):
        handle = await client.call_tool_as_task("brew", {"minutes": 0.05})
        with anyio.fail_after(10):  # a guard against hanging: the notification comes on the GET stream
            await done.wait()
        assert handle.status == "completed" and heard[-1]["taskId"] == handle.task_id
        assert problems("2025-11-25", "Task", heard[-1]) == []


@needs_spec
async def test_a_listen_stream_over_http_carries_a_tasks_notifications() -> None:
    async with peers.serving(StreamableHTTPApp(build())) as url, connect_http(url) as client:
        handle = await client.call_tool_as_task("brew", {"minutes": 0.2})
        assert client.stateless and handle.task_id is not None
        async with client.listen(tasks=[handle.task_id]) as stream:
            assert stream.acknowledged == {"taskIds": [handle.task_id]}
            with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
                async for method, params in stream:
                    note = {"jsonrpc": "2.0", "method": method, "params": params}
                    assert problems("ext-tasks", "TaskStatusNotification", note) == []
                    if params["status"] == "completed":
                        break
        assert params["result"]["content"][0]["text"] == "brewed 0.2" and handle.status == "completed"


async def test_a_2025_task_asks_over_the_sessions_stream_and_is_input_required_meanwhile() -> None:
    statuses: list[str] = []
    related: list[str] = []
    done = anyio.Event()

    async def sure(params: dict[str, Any]) -> dict[str, Any]:
        related.append(params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"])
        return {"action": "accept", "content": {"ok": True}}

    def hook(task: dict[str, Any]) -> None:
        statuses.append(task["status"])
        if task["status"] == "completed":
            done.set()

    options: dict[str, Any] = {"elicitation": sure, "on_task_status": hook}
    async with (
        peers.serving(StreamableHTTPApp(build())) as url,
        connect_http(url, protocol_version="2025-11-25", **options) as client,
    ):
        handle = await client.call_tool_as_task("confirm")
        with anyio.fail_after(10):  # a guard against hanging, not a timing assertion
            await done.wait()
        assert (await handle.result())["content"][0]["text"] == "ok=True"
    assert statuses == ["input_required", "working", "completed"] and related == [handle.task_id]


async def test_anonymous_callers_each_have_their_own_task_cap_and_a_shorter_ttl() -> None:
    """Issue 31 item 26: without authorization, one caller's unfinished tasks must not block another's."""
    server = Server("capped", tasks=TaskEngine(max_live_per_owner=1))

    @server.tool(task=True)
    async def brew(minutes: float) -> str:
        await anyio.sleep(minutes)
        return "brewed"

    app = StreamableHTTPApp(
        server, session_key=lambda scope: dict(scope["headers"]).get(b"x-caller", b"").decode()
    )
    async with (
        peers.serving(app) as url,
        connect_http(url, era="modern", headers={"x-caller": "a"}) as a,
        connect_http(url, era="modern", headers={"x-caller": "b"}) as b,
    ):
        first = await a.call_tool_as_task("brew", {"minutes": 5})
        with pytest.raises(RemoteError) as refused:
            await a.call_tool_as_task("brew", {"minutes": 5})
        other = await b.call_tool_as_task("brew", {"minutes": 5})
        assert other.task["status"] == "working"  # another caller is not held by the first one's cap
        assert (await first.refresh())["status"] == "working"  # its caller still finds its task
        await first.cancel()
        await other.cancel()
    assert refused.value.code == SERVER_BUSY
    assert other.task["status"] == "cancelled"
    assert first.task["ttlMs"] == other.task["ttlMs"] == 600_000  # not the hour an authorized task gets
