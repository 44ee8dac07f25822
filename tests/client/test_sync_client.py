"""mcpkit.client.sync: the Client's calls without async, against the example servers over stdio and HTTP,
from plain code and from inside a running event loop."""

from __future__ import annotations

import inspect
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import peers
from mcpkit.client.sync import SyncClient, connect_http, connect_stdio
from mcpkit.protocol.errors import MCPError

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = [sys.executable, str(ROOT / "examples" / "everything.py")]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def test_every_kind_of_call_over_stdio() -> None:
    with connect_stdio(EVERYTHING, env=ENV) as client:
        assert client.server_info["name"] and client.protocol
        client.ping()
        assert "add" in [tool["name"] for tool in client.list_all_tools()]
        assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
        assert client.read_resource("demo://notes/7")["contents"][0]["text"]
        greeting = client.get_prompt("greet", {"name": "Ann"})
        assert "Ann" in greeting["messages"][0]["content"]["text"]
        assert any(t["uriTemplate"] == "demo://notes/{note_id}" for t in client.list_all_resource_templates())
        assert client.call_tool("fail", {})["isError"] is True
        with pytest.raises(MCPError):
            client.read_resource("demo://missing")
        assert client.call_tool("echo", {"text": "still fine"})["content"][0]["text"] == "still fine"


def test_progress_callbacks_run_and_a_closed_client_says_so() -> None:
    seen: list[float] = []
    client = connect_stdio(EVERYTHING, env=ENV)
    client.call_tool("slow", {"seconds": 0.2}, on_progress=lambda value, total, message: seen.append(value))
    assert seen
    client.close()
    client.close()  # twice is fine
    with pytest.raises(RuntimeError, match="this client is closed"):
        client.ping()


@pytest.mark.anyio
async def test_it_works_inside_a_running_event_loop_as_in_a_notebook() -> None:
    # A Jupyter cell runs in the notebook's loop; asyncio.run() would refuse there, this does not.
    with connect_stdio(EVERYTHING, env=ENV) as client:
        assert client.call_tool("add", {"a": 40, "b": 2})["structuredContent"] == {"result": 42}


def test_over_http_against_the_commerce_server(tmp_path: Path) -> None:
    port = peers.free_port()
    command = [sys.executable, "-m", "mcpkit.cli", "serve", str(ROOT / "examples" / "commerce" / "server.py")]
    command += ["--http", "--port", str(port), "--", "--db", str(tmp_path / "shop.db")]
    with peers.server_process(command, port, env=ENV), connect_http(f"http://127.0.0.1:{port}/mcp") as client:
        stock = client.call_tool("check_inventory", {"sku": "COF-ETH-250"})
        assert stock["structuredContent"]["sku"] == "COF-ETH-250"
        assert client.list_all_prompts()


def test_a_failed_connection_raises_and_leaves_no_loop_thread() -> None:
    with pytest.raises(MCPError):
        connect_stdio([sys.executable, "-c", "raise SystemExit(3)"])
    assert "mcpkit-sync-client" not in [thread.name for thread in threading.enumerate()]


WAITER = """
import pathlib, anyio
from mcpkit import Context, Server

server = Server("waiter")

@server.tool()
async def wait(ctx: Context) -> str:
    await ctx.report_progress(0, 1)
    try:
        await anyio.sleep_forever()
    finally:
        pathlib.Path(__file__).with_name("cancelled").write_text("yes")
    return "never"

server.run()
"""


def test_ctrl_c_while_waiting_cancels_the_request_and_is_raised(tmp_path: Path) -> None:
    (tmp_path / "waiter.py").write_text(WAITER)
    started = threading.Event()

    def interrupt() -> None:
        if started.wait(30):
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    with connect_stdio([sys.executable, str(tmp_path / "waiter.py")], env=ENV) as client:
        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("wait", {}, on_progress=lambda *_: started.set())
        deadline = time.monotonic() + 30
        while not (tmp_path / "cancelled").exists():  # the server was told: notifications/cancelled
            assert time.monotonic() < deadline
            time.sleep(0.05)
        client.ping()  # and the client goes on


def parameters(method: Any) -> list[tuple[str, Any, Any]]:
    """(name, kind, default) of each parameter but self."""
    return [
        (p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values() if p.name != "self"
    ]


def test_every_public_coroutine_method_of_client_has_a_sync_method_with_the_same_parameters() -> None:
    """So a script moves between them by adding or dropping `await`."""
    from mcpkit.client import Client

    coroutines = dict(inspect.getmembers(Client, inspect.iscoroutinefunction))
    public = {name: method for name, method in coroutines.items() if not name.startswith("_")}
    assert "call_tool" in public  # the check looks at something
    missing = sorted(name for name in public if not callable(getattr(SyncClient, name, None)))
    differ = {
        name: (parameters(method), parameters(getattr(SyncClient, name)))
        for name, method in public.items()
        if name not in missing and parameters(method) != parameters(getattr(SyncClient, name))
    }
    assert (missing, differ) == ([], {})


TASKS = """
from mcpkit import Server

server = Server("tasks")

@server.tool(task=True)
def brew(cups: int) -> str:
    return f"{cups} cups"

server.run()
"""


def test_a_tool_called_as_a_task_is_followed_to_its_result_without_async(tmp_path: Path) -> None:
    (tmp_path / "tasks.py").write_text(TASKS)
    with connect_stdio([sys.executable, str(tmp_path / "tasks.py")], env=ENV) as client:
        handle = client.call_tool_as_task("brew", {"cups": 2})
        assert handle.handle.task_id is not None  # the server made a task of it
        seen: list[str] = []
        assert (
            handle.result(on_status=lambda task: seen.append(task["status"]))["content"][0]["text"]
            == "2 cups"
        )
        assert handle.status == "completed" and handle.refresh()["status"] == "completed"
        handle.cancel()  # a finished task: cancelling it is a no-op error the server answers
