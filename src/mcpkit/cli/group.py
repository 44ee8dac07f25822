"""`mcpkit list|call|search --config mcp.json`: the client commands over every server of an `mcpServers`
config at once, through a ClientGroup. Without --config, `search`, a `list` naming no server and a `call`
of SERVER.TOOL use the first client config found on this machine (Claude Code, Cursor, VS Code, Claude
Desktop) and say which.

    mcpkit list --config mcp.json [tools|prompts|resources|templates]
    mcpkit call --config mcp.json SERVER.TOOL key=value ...
    mcpkit search --config mcp.json "create an issue"
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from ..protocol.jsonrpc import JSON
from ..protocol.levels import LEVELS
from .call import coerce
from .connect import in_event_loop, log_printer
from .errors import OK, PROTOCOL, TOOL_ERROR, UsageError
from .escape import terminal_json, terminal_line, terminal_text
from .output import print_table

__all__ = ["add_search", "group_parser", "run_group", "wants_group"]

COMMANDS = ("list", "call", "search")
KINDS = ("tools", "prompts", "resources", "templates")
_VALUED = frozenset({"--timeout", "--log-level", "--limit", "--args"})
_SERVER_DOT_TOOL = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+")


def wants_group(argv: Sequence[str]) -> bool:
    """Whether these words are a config command: `search`, any with --config, `list` naming no server,
    `call SERVER.TOOL` where SERVER.TOOL is no command, file or URL (a server of a found config)."""
    if not argv or argv[0] not in COMMANDS:
        return False
    if argv[0] == "search" or any(a == "--config" or a.startswith("--config=") for a in argv):
        return True
    if "-h" in argv or "--help" in argv:
        return False  # the server commands' own help, which names --config
    words = _positionals(argv[1:])
    if argv[0] == "list":
        return words == [] or (len(words) == 1 and words[0] in KINDS)
    return bool(words) and _catalog_name(words[0])


def _positionals(argv: Sequence[str]) -> list[str]:
    words, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _VALUED
        else:
            words.append(word)
    return words


def _catalog_name(word: str) -> bool:
    if _SERVER_DOT_TOOL.fullmatch(word) is None or word.endswith(".py"):
        return False
    return shutil.which(word) is None and not Path(word).exists()


HELP = {
    "list": "list every server's tools (or prompts, resources, templates) under SERVER.NAME",
    "call": "call SERVER.TOOL with key=value arguments",
    "search": "rank every server's tools against a query",
}


def group_parser() -> argparse.ArgumentParser:
    """The parser of the config commands, which wants_group picks instead of the server commands'."""
    top = argparse.ArgumentParser(prog="mcpkit", description="Talk to every server of an mcpServers config.")
    sub = top.add_subparsers(dest="command", required=True)
    for name, helptext in HELP.items():
        _add_group_command(sub.add_parser(name, help=helptext), name)
    return top


def add_search(sub: Any) -> None:
    """The `search` subcommand on the `mcpkit` parser's subparsers (for its help: `search` always goes to
    group_parser, as wants_group says)."""
    helptext = "search the tools of every server in a config (list/call/search --config)"
    _add_group_command(sub.add_parser("search", help=helptext), "search")


def _add_group_command(cmd: argparse.ArgumentParser, name: str) -> None:
    cmd.set_defaults(run=in_event_loop(run_group))
    cmd.add_argument("--config", metavar="FILE", help="an mcpServers JSON file (default: found)")
    cmd.add_argument("--json", action="store_true", help="print JSON")
    cmd.add_argument(
        "--timeout", type=float, default=30.0, help="seconds for the servers to start and each answer"
    )
    cmd.add_argument("--log-level", choices=LEVELS, default="warning", metavar="LEVEL")
    if name == "list":
        cmd.add_argument("kind", nargs="?", default="tools", choices=KINDS)
    elif name == "call":
        cmd.add_argument("tool", metavar="SERVER.TOOL")
        cmd.add_argument("pairs", nargs="*", metavar="key=value")
        cmd.add_argument("--args", dest="json_args", help="the arguments as one JSON object")
    else:
        cmd.add_argument("query")
        cmd.add_argument("--limit", type=int, default=5)


def _config(args: argparse.Namespace) -> Any:
    from ..client.group.config import ConfigError, load_config
    from ..client.group.discovery import discover

    try:
        if args.config:
            return load_config(args.config)
        found = discover()
    except (ConfigError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if found is None:
        clients = "Claude Code, Cursor, VS Code, Claude Desktop"
        raise UsageError(f"no --config given and no client config found ({clients})")
    print(f"mcpkit: using {found.source}", file=sys.stderr)
    return found


def _only(config: Any, tool: str) -> Any:
    """For a call, only the server it names is started."""
    import dataclasses

    server, sep, _ = tool.partition(config.separator)
    if config.prefix and sep and server in config.servers:
        return dataclasses.replace(config, servers={server: config.servers[server]})
    return config


async def run_group(args: argparse.Namespace) -> int:
    from ..client.group.group import ClientGroup
    from ..client.group.names import NamingError
    from ..protocol.errors import LocalError

    config = _config(args)
    if args.command == "call":
        config = _only(config, args.tool)
    options: JSON = {
        "start_timeout": args.timeout,
        "connect_timeout": args.timeout,
        "wait": 0,  # entering already gave every server --timeout to start
        "timeout": args.timeout,
        "probe_timeout": min(10.0, args.timeout),
        "on_log": log_printer(args.log_level),
        "auth": _oauth,
    }
    try:
        async with ClientGroup.from_config(config, **options) as group:
            _report(group)
            if args.command == "list":
                return _list(group, args)
            if args.command == "search":
                found = group.search(args.query, args.limit)
                if args.json:
                    _print_json(found)
                else:
                    print_table("tools", found)
                return OK
            return await _call(group, args)
    except NamingError as exc:
        raise UsageError(str(exc)) from None
    except LocalError as exc:
        raise UsageError(exc.message) from None


def _oauth(name: str, spec: Any) -> Any:
    """A server marked `oauth` in the config logs in as `mcpkit --auth oauth` does (tokens kept)."""
    if spec.oauth is None:
        return None
    from .oauth import oauth_client

    return oauth_client(spec.url, spec.oauth.get("clientId"), spec.oauth.get("clientSecret"))


def _report(group: Any) -> None:
    for name, status in group.status().items():
        if status["state"] != "ready":
            why = f": {status['error']}" if status["error"] else ""
            print(terminal_line(f"mcpkit: server {name} is {status['state']}{why}"), file=sys.stderr)
    for problem in group.problems:
        print(terminal_line(f"mcpkit: {problem}"), file=sys.stderr)


def _list(group: Any, args: argparse.Namespace) -> int:
    items = {
        "tools": group.tools,
        "prompts": group.prompts,
        "resources": group.resources,
        "templates": group.resource_templates,
    }[args.kind]()
    if args.json:
        _print_json(items)
    else:
        print_table(args.kind, items)
    up = [s for s in group.status().values() if s["state"] == "ready"]
    return OK if up or not group.members else PROTOCOL


async def _call(group: Any, args: argparse.Namespace) -> int:
    tool = next((t for t in group.tools() if t["name"] == args.tool), None)
    try:
        arguments = orjson.loads(args.json_args) if args.json_args else None
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"--args is not JSON: {exc}") from None
    if arguments is None:
        arguments = coerce(args.pairs, (tool or {}).get("inputSchema") or {})
    result = await group.call_tool(args.tool, arguments)
    if args.json:
        _print_json(result)
    else:
        for block in result.get("content") or []:
            text = block.get("text")
            print(terminal_text(text if text is not None else f"<{block.get('type', 'blob')}>"))
    return TOOL_ERROR if result.get("isError") else OK


def _print_json(value: Any) -> None:
    sys.stdout.write(terminal_json(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()) + "\n")
