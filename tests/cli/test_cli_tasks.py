"""`mcpkit tasks URL` (list), `--get ID` and `--cancel ID`, driven as a subprocess against mcpkit's server
over Streamable HTTP in this process: the lines it prints, and its exact messages and exit codes for bad
input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import peers
from mcpkit import Server
from mcpkit.cli.tasks import task_line
from mcpkit.client import connect_http
from mcpkit.protocol.resource_auth import AccessToken
from mcpkit.transports.http_server import StreamableHTTPApp
from mcpkit.transports.http_server.asgi import AUTH_SCOPE_KEY

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
JSON = dict[str, Any]


def build(release: anyio.Event) -> Server:
    server = Server("cli-tasks")

    @server.tool(task=True)
    async def wait() -> str:
        await release.wait()
        return "released"

    @server.tool(task=True)
    def quick() -> str:
        return "quick"

    return server


def as_ada(app: Any) -> Any:
    """Every request as one principal, as behind mcpkit.auth.protect(): then a task is the principal's,
    not one session's, and the CLI's own session sees it."""
    token = AccessToken("ada", "cli", frozenset(), None, ())

    async def authorized(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, AUTH_SCOPE_KEY: token}
        await app(scope, receive, send)

    return authorized


async def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mcpkit.cli", "tasks", *args]
    env = {"PYTHONPATH": str(ROOT / "src")}
    return await anyio.to_thread.run_sync(
        lambda: subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    )


async def test_tasks_lists_gets_and_cancels_a_principals_tasks() -> None:
    release = anyio.Event()
    app = as_ada(StreamableHTTPApp(build(release)))
    async with peers.serving(app) as url, connect_http(url, protocol_version="2025-11-25") as client:
        quick = await client.call_tool_as_task("quick")
        await quick.result()
        waiting = await client.call_tool_as_task("wait")
        listed = (await client.request("tasks/list"))["tasks"]
        shown = await mcpkit(url)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout == "".join(task_line(t) + "\n" for t in listed)
        assert [line.split()[:2] for line in shown.stdout.splitlines()] == [
            [quick.task_id, "completed"],
            [waiting.task_id, "working"],
        ]
        assert waiting.task_id is not None
        got = await mcpkit(url, "--get", waiting.task_id)
        assert got.returncode == 0 and got.stdout.split()[:2] == [waiting.task_id, "working"]
        cancelled = await mcpkit(url, "--cancel", waiting.task_id)
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.split()[:2] == [waiting.task_id, "cancelled"]
        assert (await client.request("tasks/get", {"taskId": waiting.task_id}))["status"] == "cancelled"


async def test_a_new_session_without_a_principal_has_no_tasks() -> None:
    async with peers.serving(StreamableHTTPApp(build(anyio.Event()))) as url:
        async with connect_http(url, protocol_version="2025-11-25") as client:
            await client.call_tool_as_task("quick")  # this session's, not the CLI's
        shown = await mcpkit(url)
    assert (shown.returncode, shown.stdout) == (0, "")
    assert shown.stderr == (
        "mcpkit: no tasks for this session: without authorization a server keeps each task for the session "
        "that made it, and this is a new one; pass --header 'Authorization: Bearer TOKEN' or --auth oauth to "
        "list a principal's\n"
    )


async def test_an_unknown_id_is_the_servers_32602_and_exit_3() -> None:
    async with peers.serving(StreamableHTTPApp(build(anyio.Event()))) as url:
        for flag in ("--get", "--cancel"):
            done = await mcpkit(url, flag, "nope")
            assert done.returncode == 3 and done.stdout == ""
            assert done.stderr == "mcpkit: error -32602: Invalid params: no task 'nope'\n"


async def test_an_unreachable_server_and_bad_flags_are_one_line_each() -> None:
    url = f"http://127.0.0.1:{peers.free_port()}/mcp"
    done = await mcpkit(url)
    assert done.returncode == 3
    assert done.stderr == (
        f"mcpkit: cannot connect to {url} (ConnectError: All connection attempts failed);"
        " is the server running?\n"
    )
    both = await mcpkit(url, "--get", "a", "--cancel", "b")
    assert both.returncode == 2 and "argument --cancel: not allowed with argument --get" in both.stderr


# Issue 31, item 13: what `tasks` says for an empty id and for a task that had already ended; the handle's
# status after cancel().


@pytest.mark.parametrize("flag", ["--get", "--cancel"])
async def test_an_empty_task_id_is_refused_up_front(flag: str) -> None:
    done = await mcpkit("http://127.0.0.1:9/mcp", flag, "")
    assert (done.returncode, done.stderr) == (
        2,
        f"mcpkit: {flag} needs a task id (`mcpkit tasks SERVER` lists them)\n",
    )


async def test_cancelling_a_task_that_had_ended_says_so() -> None:
    async with peers.serving(StreamableHTTPApp(build(anyio.Event()))) as url:
        async with connect_http(url) as client:  # 2026-07-28: the task id is its own bearer
            quick = await client.call_tool_as_task("quick")
            await quick.result()
        assert quick.task_id is not None
        done = await mcpkit(url, "--cancel", quick.task_id)
    assert done.returncode == 2 and done.stdout.split()[:2] == [quick.task_id, "completed"]
    assert done.stderr == f"mcpkit: task {quick.task_id} had already ended (completed): nothing to cancel\n"


@pytest.mark.parametrize("version", [None, "2025-11-25"])
async def test_a_cancelled_handle_reports_the_servers_status(version: str | None) -> None:
    release = anyio.Event()
    async with peers.serving(StreamableHTTPApp(build(release))) as url:
        options: JSON = {"protocol_version": version} if version else {}
        async with connect_http(url, **options) as client:
            waiting = await client.call_tool_as_task("wait")
            assert waiting.status == "working"
            await waiting.cancel()
            assert waiting.status == "cancelled"
        release.set()
