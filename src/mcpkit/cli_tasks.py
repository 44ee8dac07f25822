"""`mcpkit tasks SERVER`: the tasks a server keeps for this caller, one line each (id, status, created,
statusMessage); `--get ID` one task, `--cancel ID` cancels one.

Listing needs the 2025-11-25 tasks utility's tasks/list, so it speaks that era (the 2026-07-28 tasks
extension has no tasks/list: a task id is its own bearer there). Without authorization a server scopes a
2025-11-25 task to the session that made it, so a new session lists only what its principal owns.
`--get` and `--cancel` take the server's newest era, declaring the extension where it applies.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson

from .cli_escape import terminal_json, terminal_line
from .cli_listen import seconds

__all__ = ["add_tasks", "run_tasks", "task_line"]

JSON = dict[str, Any]
OK, PROTOCOL = 0, 3
UTILITY = "2025-11-25"


def add_tasks(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("server", help="an http(s) URL, or a command line that starts a stdio server")
    which = cmd.add_mutually_exclusive_group()
    which.add_argument("--get", metavar="ID", help="show one task (tasks/get)")
    which.add_argument("--cancel", metavar="ID", help="cancel one task (tasks/cancel)")
    cmd.add_argument("--json", action="store_true", help="print the raw result as JSON")
    cmd.add_argument("--timeout", type=seconds, default=60.0, help="seconds to wait for each answer")


def task_line(task: JSON) -> str:
    """One task as a line: id, status, when it was created, its statusMessage if any."""
    line = f"{task.get('taskId')}  {task.get('status', '?'):<14} {task.get('createdAt', '')}"
    if task.get("statusMessage"):
        line += f"  {task['statusMessage']}"
    return terminal_line(line)


@asynccontextmanager
async def _client(server: str, args: argparse.Namespace, **options: Any) -> AsyncIterator[Any]:
    from .client.client import connect_http, connect_stdio

    options["timeout"] = args.timeout
    if server.startswith(("http://", "https://")):
        async with connect_http(server, **options) as client:
            yield client
        return
    async with connect_stdio(shlex.split(server), **options) as client:
        yield client


async def run_tasks(args: argparse.Namespace) -> int:
    """The `tasks` command; protocol errors (an unknown id: -32602) reach the caller as MCPError."""
    from .client.tasks import DECLARE_TASKS

    if args.get is None and args.cancel is None:
        return await _list(args)
    async with _client(args.server, args) as client:
        params: JSON = {"taskId": args.get or args.cancel}
        if client.stateless:
            params["_meta"] = DECLARE_TASKS
        if args.cancel is not None:
            cancelled = await client.request("tasks/cancel", params)
            if not cancelled.get("taskId"):  # the extension acknowledges with an empty result
                cancelled = await client.request("tasks/get", params)
            return _show(cancelled, args.json)
        return _show(await client.request("tasks/get", params), args.json)


async def _list(args: argparse.Namespace) -> int:
    async with _client(args.server, args, protocol_version=UTILITY) as client:
        listed = client.server_capabilities.get("tasks", {})
        if client.protocol != UTILITY or not isinstance(listed, dict) or "list" not in listed:
            print(
                f"mcpkit: {terminal_line(args.server)} does not list tasks (no tasks.list in its "
                f"{terminal_line(client.protocol)} capabilities); use --get ID",
                file=sys.stderr,
            )
            return PROTOCOL
        tasks: list[JSON] = []
        cursor: str | None = None
        while True:
            page = await client.request("tasks/list", {"cursor": cursor} if cursor else None)
            tasks.extend(t for t in page.get("tasks", []) if isinstance(t, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        if not tasks and not args.json:
            print("mcpkit: no tasks", file=sys.stderr)
        return _show(tasks, args.json)


def _show(tasks: JSON | list[JSON], as_json: bool) -> int:
    """A task (tasks/get, tasks/cancel) or a list of them: a line each, or the JSON as received."""
    if as_json:
        sys.stdout.write(terminal_json(orjson.dumps(tasks, option=orjson.OPT_INDENT_2).decode()) + "\n")
        return OK
    for task in tasks if isinstance(tasks, list) else [tasks]:
        print(task_line(task))
    return OK
