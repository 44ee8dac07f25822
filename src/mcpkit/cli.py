"""The `mcpkit` command: serve a server object, or talk to any MCP server from the terminal.

Exit codes: cli_errors.EXIT_CODES, shown by `mcpkit --help`.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import orjson

from . import __version__
from ._extras import MissingExtra
from .cli_auth import add_auth, run_auth
from .cli_call import coerce
from .cli_connect import add_client_options, open_client
from .cli_errors import (
    EXIT_CODES,
    INTERRUPTED,
    LOAD,
    OK,
    PIPE_CLOSED,
    PROTOCOL,
    TOOL_ERROR,
    USAGE,
    Failure,
    LoadError,
    UsageError,
    needs_extra,
)
from .cli_escape import terminal_json, terminal_line, terminal_text
from .cli_group import group_parser, run_group, wants_group
from .cli_inspect import add_inspect, run_inspect
from .cli_install import add_install, run_install
from .cli_output import ProgressDisplay, print_table, silence_stdout, stdout_closed
from .cli_proxy import add_proxy, run_proxy
from .cli_serve import add_serve, run_serve, split_script_args
from .cli_tasks import add_tasks, run_tasks

__all__ = ["main"]


def show(result: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(terminal_json(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode()) + "\n")
        return
    blocks: list[Any] = []
    if isinstance(result, dict):
        blocks = result.get("content") or result.get("contents") or []
    for block in blocks:
        text = block.get("text")
        shown = text if text is not None else f"<{block.get('type', 'blob')} {block.get('mimeType', '')}>"
        print(terminal_text(shown))


async def run_command(args: argparse.Namespace) -> int:
    if args.command == "tasks":
        return await run_tasks(args)
    async with open_client(args.server, args) as client:
        if args.command == "ping":
            await client.ping()
            print("pong")
            return OK
        if args.command == "list":
            return await list_items(client, args)
        if args.command == "call":
            return await call(client, args)
        if args.command == "read":
            show(await read(client, args.uri), args.json)
            return OK
        if args.command == "prompt":
            await known(args.name, "prompt", [p["name"] for p in await client.list_all_prompts()])
            result = await client.get_prompt(args.name, dict(p.partition("=")[::2] for p in args.pairs))
            if args.json:
                show(result, True)
            for message in [] if args.json else result.get("messages", []):
                content = message.get("content", {})
                text = content.get("text", "<" + str(content.get("type")) + ">")
                print(f"{terminal_line(message.get('role'))}: {terminal_text(text)}")
            return OK
    raise UsageError(f"unknown command {args.command!r}")


async def list_items(client: Any, args: argparse.Namespace) -> int:
    fetch = {
        "tools": client.list_all_tools,
        "resources": client.list_all_resources,
        "templates": client.list_all_resource_templates,
        "prompts": client.list_all_prompts,
    }[args.kind]
    items = await fetch()
    if args.json:
        show(items, True)
    else:
        print_table(args.kind, items)
    return OK


async def call_as_task(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """tools/call as a task: its status on stderr as it changes, then its result."""
    handle = await client.call_tool_as_task(tool, arguments)
    if handle.task_id is None:
        print("mcpkit: the server answered at once (no task)", file=sys.stderr)
        return await handle.result()

    def status(task: dict[str, Any]) -> None:
        line = f"task {handle.task_id}: {task.get('status')}"
        if task.get("statusMessage"):
            line += f" ({task['statusMessage']})"
        print(terminal_line(line), file=sys.stderr)

    return await handle.result(on_status=status)


async def known(name: str, kind: str, names: list[str]) -> None:
    """UsageError (exit 2) for a tool or prompt the server does not have, with the closest names."""
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"unknown {kind} {name!r}{hint}")


async def read(client: Any, uri: str) -> Any:
    from .protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, MCPError

    try:
        return await client.read_resource(uri)
    except MCPError as exc:  # -32602 in the eras that fold resource-not-found into it
        if exc.code not in (RESOURCE_NOT_FOUND, INVALID_PARAMS):
            raise
        raise UsageError(f"no resource {uri!r} (error {exc.code}: {exc.message})") from None


async def call(client: Any, args: argparse.Namespace) -> int:
    tools = {t["name"]: t for t in await client.list_all_tools()}
    await known(args.tool, "tool", list(tools))
    tool = tools[args.tool]
    try:
        arguments = orjson.loads(args.json_args) if args.json_args else None
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"--args is not JSON: {exc}") from None
    if arguments is None:
        arguments = coerce(args.pairs, tool.get("inputSchema", {}))

    progress = ProgressDisplay()
    try:
        if args.task:
            result = await call_as_task(client, args.tool, arguments)
        else:
            result = await client.call_tool(args.tool, arguments, on_progress=progress)
    finally:
        progress.close()
    if args.json:
        show(result, True)
    else:
        show(result, False)
    return TOOL_ERROR if result.get("isError") else OK


def parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES)
    top = argparse.ArgumentParser(
        prog="mcpkit",
        description="Serve and talk to Model Context Protocol servers.",
        epilog=f"exit codes:\n{codes}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    add_serve(
        sub.add_parser("serve", help="serve a Server object (file.py[:name] or module:name) over stdio")
    )
    add_proxy(sub)
    add_auth(sub)
    add_install(
        sub.add_parser("install", help="add a server to Claude Desktop, Claude Code, Cursor or VS Code")
    )
    for name, helptext in (
        ("list", "list tools, resources, templates or prompts"),
        ("call", "call a tool"),
        ("read", "read a resource"),
        ("prompt", "get a prompt"),
        ("ping", "ping a server"),
    ):
        cmd = sub.add_parser(name, help=helptext)
        add_client_options(cmd)
        if name == "list":
            cmd.add_argument(
                "kind", nargs="?", default="tools", choices=["tools", "resources", "templates", "prompts"]
            )
        elif name == "call":
            cmd.add_argument("tool")
            cmd.add_argument("pairs", nargs="*", metavar="key=value")
            cmd.add_argument("--args", dest="json_args", help="the arguments as one JSON object")
            cmd.add_argument(
                "--task",
                action="store_true",
                help="ask for a task (2026-07-28 tasks extension); show its status",
            )
        elif name == "read":
            cmd.add_argument("uri")
        elif name == "prompt":
            cmd.add_argument("name")
            cmd.add_argument("pairs", nargs="*", metavar="key=value")
    add_tasks(sub.add_parser("tasks", help="list a server's tasks, or --get / --cancel one"))
    sub.add_parser("search", help="search the tools of every server in a config (list/call/search --config)")
    add_inspect(sub)
    return top


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The arguments, with key=value words allowed after options too (`call URL add --json a=2`)."""
    top = parser()
    args, extra = top.parse_known_args(argv)
    if extra and hasattr(args, "pairs") and not any(word.startswith("-") for word in extra):
        args.pairs = [*args.pairs, *extra]
    elif extra:
        top.parse_args(argv)  # argparse's own message for what it does not know, exit 2
    return args


_EXTRAS = {
    "uvicorn": "http",
    "httpx": "http",
    "starlette": "http",
    "redis": "redis",
    "jwt": "oauth",
    "watchfiles": "dev",
}


def _dispatch(args: argparse.Namespace, script_args: list[str]) -> int:
    if getattr(args, "group", False):  # `--config FILE`: many servers (cli_group.py)
        return anyio.run(run_group, args)
    if args.command == "proxy":
        return run_proxy(args)
    if args.command == "serve":
        return run_serve(args, script_args)
    if args.command == "install":
        return run_install(args, script_args)
    if args.command == "inspect":
        return run_inspect(args)
    if args.command == "auth":
        return run_auth(args)
    return anyio.run(run_command, args)


def _protocol_line(exc: Any, args: argparse.Namespace) -> str:
    """An MCPError as one line, with what to do about the common ones."""
    from .protocol.errors import MISSING_CLIENT_CAPABILITY

    hint = ""
    if exc.message == "Connection closed":
        hint = " (the server exited or closed the connection; its own stderr, if any, is above)"
    elif "HTTP 401 " in exc.message and not getattr(args, "auth", None):
        hint = " (pass --header 'Authorization: Bearer TOKEN', or --auth oauth)"
    elif exc.code == MISSING_CLIENT_CAPABILITY and "sampling" in str(exc.data):
        hint = " (pass --sampling CMD to answer sampling requests)"
    return f"mcpkit: error {exc.code}: {terminal_line(exc.message)}{hint}"


def main(argv: Sequence[str] | None = None) -> int:
    argv, script_args = split_script_args(sys.argv[1:] if argv is None else argv)
    args = group_parser().parse_args(argv) if wants_group(argv) else parse(argv)
    from .protocol.errors import ConnectionFailed, MCPError

    try:
        return _dispatch(args, script_args)
    except LoadError as exc:
        print(exc.report, end="", file=sys.stderr)
        print(f"mcpkit: {exc}", file=sys.stderr)
        return LOAD
    except UsageError as exc:
        print(f"mcpkit: {terminal_line(exc)}", file=sys.stderr)
        return USAGE
    except ConnectionFailed as exc:
        print(f"mcpkit: {terminal_line(exc.message)}", file=sys.stderr)
        return PROTOCOL
    except MCPError as exc:
        print(_protocol_line(exc, args), file=sys.stderr)
        return PROTOCOL
    except TimeoutError as exc:
        print(f"mcpkit: timeout: {exc}", file=sys.stderr)
        return PROTOCOL
    except Failure as exc:
        print(f"mcpkit: {exc}", file=sys.stderr)
        return PROTOCOL
    except BrokenPipeError as exc:
        if stdout_closed():  # the reader stopped early (`| head`): nothing to say, as coreutils say nothing
            silence_stdout()
            return PIPE_CLOSED
        print(f"mcpkit: could not start or reach the server: {exc}", file=sys.stderr)
        return PROTOCOL
    except OSError as exc:
        print(f"mcpkit: could not start or reach the server: {exc}", file=sys.stderr)
        return PROTOCOL
    except ModuleNotFoundError as exc:  # an extra not installed
        extra = (
            exc.extra if isinstance(exc, MissingExtra) else _EXTRAS.get((exc.name or "").partition(".")[0])
        )
        if extra is None:
            raise
        print(f"mcpkit: {needs_extra(extra, exc.name)}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("\nmcpkit: interrupted", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
