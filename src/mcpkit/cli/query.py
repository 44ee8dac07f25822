"""`mcpkit list|read|prompt|ping SERVER`: what a server offers, one resource, one prompt, or a ping."""

from __future__ import annotations

import argparse
from typing import Any

from ..protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, MCPError
from .call import known
from .connect import add_client_options, client_command
from .errors import OK, UsageError
from .escape import terminal_line, terminal_text
from .output import print_table, show

__all__ = ["add_list", "add_ping", "add_prompt", "add_read"]

KINDS = ["tools", "resources", "templates", "prompts"]


def add_list(sub: Any) -> None:
    """The `list` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser("list", help="list tools, resources, templates or prompts")
    add_client_options(cmd)
    cmd.add_argument("kind", nargs="?", default="tools", choices=KINDS)
    cmd.set_defaults(run=client_command(list_items))


def add_read(sub: Any) -> None:
    """The `read` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser("read", help="read a resource")
    add_client_options(cmd)
    cmd.add_argument("uri")
    cmd.set_defaults(run=client_command(read))


def add_prompt(sub: Any) -> None:
    """The `prompt` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser("prompt", help="get a prompt")
    add_client_options(cmd)
    cmd.add_argument("name")
    cmd.add_argument("pairs", nargs="*", metavar="key=value")
    cmd.set_defaults(run=client_command(prompt))


def add_ping(sub: Any) -> None:
    """The `ping` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser("ping", help="ping a server")
    add_client_options(cmd)
    cmd.set_defaults(run=client_command(ping))


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


async def read(client: Any, args: argparse.Namespace) -> int:
    try:
        result = await client.read_resource(args.uri)
    except MCPError as exc:  # -32602 in the eras that fold resource-not-found into it
        if exc.code not in (RESOURCE_NOT_FOUND, INVALID_PARAMS):
            raise
        raise UsageError(f"no resource {args.uri!r} (error {exc.code}: {exc.message})") from None
    show(result, args.json)
    return OK


async def prompt(client: Any, args: argparse.Namespace) -> int:
    known(args.name, "prompt", [p["name"] for p in await client.list_all_prompts()])
    result = await client.get_prompt(args.name, dict(p.partition("=")[::2] for p in args.pairs))
    if args.json:
        show(result, True)
        return OK
    for message in result.get("messages", []):
        content = message.get("content", {})
        text = content.get("text", "<" + str(content.get("type")) + ">")
        print(f"{terminal_line(message.get('role'))}: {terminal_text(text)}")
    return OK


async def ping(client: Any, args: argparse.Namespace) -> int:
    await client.ping()
    print("pong")
    return OK
