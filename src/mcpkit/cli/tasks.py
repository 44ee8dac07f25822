"""`mcpkit tasks SERVER`: the tasks a server keeps for this caller, one line each (id, status, created,
statusMessage); `--get ID` one task, `--cancel ID` cancels one.

Listing needs the 2025-11-25 tasks utility's tasks/list, so it speaks that era (the 2026-07-28 tasks
extension has no tasks/list: a task id is its own bearer there). Without authorization a server scopes a
2025-11-25 task to the session that made it, so a new session lists none: "no tasks" says so. The server
is reached as by the other client commands (--header, --auth oauth, a server.py file).
`--get` and `--cancel` take the server's newest era, declaring the extension where it applies.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from ..protocol.jsonrpc import JSON
from .connect import add_client_options, in_event_loop, open_client
from .errors import OK, PROTOCOL, UsageError
from .escape import terminal_json, terminal_line

__all__ = ["add_tasks", "run_tasks", "task_line"]

UTILITY = "2025-11-25"
ENDED = ("completed", "failed")  # a cancelled task is the cancel's own outcome
_UNAUTHORIZED = (
    " for this session: without authorization a server keeps each task for the session that made it, and "
    "this is a new one; pass --header 'Authorization: Bearer TOKEN' or --auth oauth to list a principal's"
)


def add_tasks(sub: Any) -> None:
    """The `tasks` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser(
        "tasks", help="list a server's tasks, or --get / --cancel one"
    )
    add_client_options(cmd)
    cmd.set_defaults(run=in_event_loop(run_tasks))
    which = cmd.add_mutually_exclusive_group()
    which.add_argument("--get", metavar="ID", help="show one task (tasks/get)")
    which.add_argument("--cancel", metavar="ID", help="cancel one task (tasks/cancel)")


def task_line(task: JSON) -> str:
    """One task as a line: id, status, when it was created, its statusMessage if any."""
    line = f"{task.get('taskId')}  {task.get('status', '?'):<14} {task.get('createdAt', '')}"
    if task.get("statusMessage"):
        line += f"  {task['statusMessage']}"
    return terminal_line(line)


async def run_tasks(args: argparse.Namespace) -> int:
    """The `tasks` command; protocol errors (an unknown id: -32602) reach the caller as MCPError."""
    from ..client.tasks import DECLARE_TASKS

    if args.get is None and args.cancel is None:
        return await _list(args)
    task_id = args.get if args.get is not None else args.cancel
    if not task_id.strip():
        flag = "--get" if args.get is not None else "--cancel"
        raise UsageError(f"{flag} needs a task id (`mcpkit tasks SERVER` lists them)")
    async with open_client(args.server, args) as client:
        params: JSON = {"taskId": task_id}
        if client.stateless:
            params["_meta"] = DECLARE_TASKS
        if args.get is not None:
            return _show(await client.request("tasks/get", params), args.json)
        cancelled = await client.request("tasks/cancel", params)
        if not cancelled.get("taskId"):  # the extension acknowledges with an empty result
            cancelled = await client.request("tasks/get", params)
        _show(cancelled, args.json)
        if cancelled.get("status") in ENDED:
            status = terminal_line(cancelled.get("status"))
            raise UsageError(f"task {terminal_line(task_id)} had already ended ({status}): nothing to cancel")
        return OK


async def _list(args: argparse.Namespace) -> int:
    async with open_client(args.server, args, protocol_version=UTILITY) as client:
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
            print(f"mcpkit: no tasks{'' if _authorized(args) else _UNAUTHORIZED}", file=sys.stderr)
        return _show(tasks, args.json)


def _authorized(args: argparse.Namespace) -> bool:
    return bool(args.auth) or any(h.lower().startswith("authorization:") for h in args.header)


def _show(tasks: JSON | list[JSON], as_json: bool) -> int:
    """A task (tasks/get, tasks/cancel) or a list of them: a line each, or the JSON as received."""
    if as_json:
        sys.stdout.write(terminal_json(orjson.dumps(tasks, option=orjson.OPT_INDENT_2).decode()) + "\n")
        return OK
    for task in tasks if isinstance(tasks, list) else [tasks]:
        print(task_line(task))
    return OK
