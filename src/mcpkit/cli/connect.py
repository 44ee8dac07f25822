"""How the `mcpkit` client commands reach a server: the target (an http(s) URL, a server.py file or a
command line), HTTP headers and OAuth, roots, server logs on stderr, and a connection that gives up
after --timeout."""

from __future__ import annotations

import argparse
import ast
import math
import re
import shlex
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import orjson

from ..protocol.jsonrpc import JSON
from ..protocol.levels import LEVELS, severity
from .errors import Failure, UsageError
from .escape import terminal_json, terminal_line
from .listen import seconds
from .load import split_target

__all__ = [
    "add_client_options",
    "client_command",
    "in_event_loop",
    "open_client",
    "parse_headers",
    "server_target",
]

# --era's values: mcpkit.client.era.Era's, and "modern", its name for 2026-07-28 before 0.1 (Era takes it too)
ERA_CHOICES = ["auto", "stateless", "handshake", "modern"]

# host[:port][/path] with a port or a path: what people type when they mean http://host:port/path
_URL_LIKE = re.compile(r"^(localhost|[\w-]+(\.[\w-]+)+|\[[0-9a-fA-F:]+\])(:\d+(/\S*)?|/\S*)$")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 token


def add_client_options(cmd: argparse.ArgumentParser) -> None:
    """The options every client command takes."""
    cmd.add_argument(
        "server",
        help="an http(s) URL, a server.py[:NAME] file (run by this Python when it has a __main__ block, "
        "else served as `mcpkit serve` serves it; quote 'server.py ARGS' to give it arguments), or a "
        "server's command line",
    )
    cmd.add_argument("--json", action="store_true", help="print the raw result as JSON")
    cmd.add_argument(
        "--timeout", type=seconds, default=60.0, help="seconds to wait for the connection and each answer"
    )
    cmd.add_argument(
        "--sampling",
        metavar="CMD",
        help="answer sampling by running CMD: params JSON on stdin, a result (JSON or text) on stdout",
    )
    cmd.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE", help="an HTTP header (repeatable)"
    )
    cmd.add_argument(
        "--auth", choices=["oauth"], help="authorize with OAuth in the browser; tokens kept for next time"
    )
    cmd.add_argument("--client-id", metavar="ID", help="with --auth oauth: a client registered beforehand")
    cmd.add_argument("--client-secret", metavar="SECRET", help="with --auth oauth: that client's secret")
    cmd.add_argument(
        "--roots",
        nargs="+",
        action="extend",
        default=[],
        metavar="DIR",
        help="directories offered as roots (after the positionals, or end them with --)",
    )
    cmd.add_argument(
        "--log-level",
        choices=LEVELS,
        default="info",
        metavar="LEVEL",
        help="server logs shown from LEVEL up (default info)",
    )


def server_target(server: str) -> tuple[str, str | list[str]]:
    """("http", url) or ("stdio", argv) for the words naming the server; UsageError for what is neither."""
    if server.startswith(("http://", "https://")):
        try:
            urlsplit(server).port  # noqa: B018  (raises for a port out of range)
        except ValueError as exc:
            raise UsageError(f"{server!r} is not a usable URL: {exc}") from None
        return "http", server
    scheme = _SCHEME.match(server)
    if scheme:
        raise UsageError(f"{server!r}: a server URL is http:// or https://, not {scheme.group(1)}://")
    try:
        words = shlex.split(server)
    except ValueError as exc:
        raise UsageError(f"the server command line {server!r} does not parse: {exc}") from None
    if not words:
        raise UsageError("the server is empty: give an http(s) URL, a server.py file or a command line")
    first = words[0]
    spec, name = split_target(first)
    if spec.endswith(".py"):
        if not Path(spec).is_file():
            raise UsageError(f"no such file: {spec}")
        if not name and runs_itself(Path(spec)):
            return "stdio", [sys.executable, *words]  # its own __main__ block decides how it serves
        # served as `mcpkit serve` serves it, by this Python; the rest is the file's argv
        rest = ["--", *words[1:]] if len(words) > 1 else []
        return "stdio", [sys.executable, "-m", "mcpkit", "serve", first, *rest]
    if shutil.which(first) is None:
        if len(words) == 1 and _URL_LIKE.match(first) and not Path(first).exists():
            raise UsageError(f"{first!r} looks like a URL without its scheme: write http://{first}")
        if Path(first).is_file():
            raise UsageError(f"{first} is not executable (chmod +x it, or name its interpreter first)")
        raise UsageError(
            f"no such command: {first!r} (the server is an http(s) URL, a server.py file or a command line)"
        )
    return "stdio", words


def runs_itself(path: Path) -> bool:
    """Whether a Python file has a top-level `if __name__ == "__main__":` block."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return False  # `mcpkit serve` will say what is wrong with it
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)):
            continue
        if test.left.id == "__name__" and any(
            isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators
        ):
            return True
    return False


def parse_headers(items: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not _HEADER_NAME.match(name) or "\r" in value or "\n" in value:
            raise UsageError(f"--header {item!r} is not NAME:VALUE (e.g. --header 'X-Api-Key: abc')")
        headers[name] = value
    return headers


def roots_of(paths: Sequence[str]) -> list[JSON]:
    roots = []
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if not path.is_dir():
            raise UsageError(f"--roots: no such directory: {raw}")
        roots.append({"uri": path.as_uri(), "name": path.name or str(path)})
    return roots


def log_printer(level: str) -> Any:
    """Prints a server's notifications/message on stderr, from `level` up."""
    floor = severity(level) or 0

    def on_log(params: JSON) -> None:
        shown = params.get("level")
        if severity(str(shown)) is not None and (severity(str(shown)) or 0) < floor:
            return
        data = params.get("data")
        text = terminal_line(data) if isinstance(data, str) else terminal_json(orjson.dumps(data).decode())
        logger = f" {terminal_line(params['logger'])}" if params.get("logger") else ""
        print(f"[{terminal_line(shown)}{logger}] {text}", file=sys.stderr)

    return on_log


def _client_options(args: argparse.Namespace) -> JSON:
    from .prompts import terminal_elicitation
    from .sampling import sampling_by_command

    # Without --sampling the client declares no sampling, so a server's ctx.sample() fails with a clear error.
    options: JSON = {
        "on_log": log_printer(args.log_level),
        "timeout": args.timeout,
        "probe_timeout": min(10.0, args.timeout),
        "elicitation": terminal_elicitation(),
        "elicitation_url": True,
    }
    if args.sampling:
        options["sampling"] = sampling_by_command(args.sampling)
    if args.roots:
        options["roots"] = roots_of(args.roots)
    return options


@asynccontextmanager
async def _connect(args: argparse.Namespace, extra: JSON) -> AsyncIterator[Any]:
    kind, where = server_target(args.server)
    options = {**_client_options(args), **extra}
    if kind == "stdio":
        if args.header or args.auth:
            raise UsageError("--header and --auth are for http(s) servers; this server is a command")
        from ..client.connect import connect_stdio

        # a server that ignores its closed stdin is stopped soon, so --timeout holds for it too
        options["shutdown_timeout"] = min(2.0, args.timeout / 20)
        options["start_new_session"] = (
            True  # Ctrl-C is for mcpkit to handle (a form, the call), not the server
        )
        async with connect_stdio(list(where), **options) as client:
            yield client
        return
    from ..client.connect import connect_http

    if args.auth != "oauth":
        async with connect_http(str(where), headers=parse_headers(args.header), **options) as client:
            yield client
        return
    from ..client.oauth import OAuthError
    from .oauth import oauth_client

    options["auth"] = oauth_client(str(where), args.client_id, args.client_secret)
    try:
        async with connect_http(str(where), headers=parse_headers(args.header), **options) as client:
            yield client
    except OAuthError as exc:
        raise Failure(f"authorization failed: {terminal_line(exc)}") from None


@asynccontextmanager
async def open_client(server: str, args: argparse.Namespace, **extra: Any) -> AsyncIterator[Any]:
    """A connected client, its server's logs shown from --log-level; the connection, handshake and
    level together take at most --timeout (each later request has its own --timeout). `extra`: more
    Client options (tasks: protocol_version)."""
    args.server = server
    with anyio.CancelScope(deadline=anyio.current_time() + args.timeout) as scope:
        async with _connect(args, extra) as client:
            if "logging" in client.server_capabilities:
                await client.set_logging_level(args.log_level)
            scope.deadline = math.inf
            yield client
    if scope.cancelled_caught:
        raise TimeoutError(f"the server did not answer within --timeout {args.timeout:g}s")


def in_event_loop(
    command: Callable[[argparse.Namespace], Awaitable[int]],
) -> Callable[[argparse.Namespace], int]:
    """An async command as a subparser's `run`: it runs in an event loop of its own."""

    def run(args: argparse.Namespace) -> int:
        return anyio.run(command, args)

    return run


def client_command(
    body: Callable[[Any, argparse.Namespace], Awaitable[int]],
) -> Callable[[argparse.Namespace], int]:
    """A subparser's `run` that connects to args.server (open_client) and runs `body` with the client."""

    async def run(args: argparse.Namespace) -> int:
        async with open_client(args.server, args) as client:
            return await body(client, args)

    return in_event_loop(run)
