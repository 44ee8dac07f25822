"""`mcpkit inspect TARGET [--port P] [--no-browser]`: the inspector's page for a server, in the browser."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio

from .connect import ERA_CHOICES
from .errors import OK, UsageError

__all__ = ["add_inspect", "run_inspect"]


def add_inspect(sub: Any) -> None:
    """The `inspect` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser(
        "inspect", help="explore a server in the browser (a local page, token-protected)"
    )
    cmd.add_argument(
        "server",
        nargs="?",
        default="",
        metavar="TARGET",
        help="an http(s) URL, a server.py file, a command line, or a server's name in a client's config "
        "(Claude Desktop, Claude Code, Cursor, VS Code); none: choose in the page",
    )
    cmd.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one)")
    cmd.add_argument("--no-browser", action="store_true", help="print the page's URL, do not open it")
    cmd.add_argument(
        "--era",
        choices=ERA_CHOICES,
        default="auto",
        help="the protocol era: 2026-07-28 (stateless), initialize (handshake) or what the server speaks",
    )
    cmd.add_argument("--protocol-version", metavar="VERSION", help="with --era handshake: the version asked")
    cmd.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE", help="an HTTP header (repeatable)"
    )
    cmd.add_argument("--auth", choices=["oauth"], help="authorize with OAuth in the browser")
    cmd.add_argument("--client-id", metavar="ID", help="with --auth oauth: a client registered beforehand")
    cmd.add_argument("--client-secret", metavar="SECRET", help="with --auth oauth: that client's secret")
    cmd.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the connection")
    cmd.set_defaults(run=run_inspect)


def run_inspect(args: argparse.Namespace) -> int:
    from ..inspector.opening import Target, resolved
    from ..inspector.serving import bind, serve

    target = Target(
        server=args.server,
        era=args.era,
        protocol_version=args.protocol_version,
        headers=args.header,
        auth=args.auth,
        client_id=args.client_id,
        client_secret=args.client_secret,
        timeout=args.timeout,
    )
    if args.server:  # a target that cannot work is a usage error now, not in the page
        found = resolved(target)
        if found is not target:
            print(f"mcpkit inspect: {args.server!r} is {found.server}", file=sys.stderr)
    try:
        sock = bind(args.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None

    def ready(url: str) -> None:
        print(f"mcpkit inspect: open {url}", flush=True)
        print("(the token in the URL is the key to this page; Ctrl-C stops the inspector)", file=sys.stderr)

    anyio.run(lambda: serve(sock, target, on_ready=ready, open_browser=not args.no_browser))
    return OK
