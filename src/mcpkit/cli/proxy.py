"""`mcpkit proxy TARGET [--http --port N]`: re-serve a remote MCP server (a stdio command line or an
http(s) URL, either era) over stdio or Streamable HTTP, e.g. a stdio-only server offered over HTTP:

    mcpkit proxy 'npx -y @modelcontextprotocol/server-everything' --http --port 8000
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from .connect import ERA_CHOICES
from .listen import bind, port_number

__all__ = ["add_proxy", "run_proxy"]


def add_proxy(sub: Any) -> None:
    """The `proxy` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser(
        "proxy", help="re-serve a remote server (a command line or an http(s) URL) over stdio or HTTP"
    )
    cmd.add_argument("target", help="an http(s) URL, or a command line that starts a stdio server")
    cmd.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    cmd.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default 127.0.0.1)")
    cmd.add_argument("--port", type=port_number, default=8000, help="port with --http (default 8000)")
    cmd.add_argument("--name", help="the server name to give the proxy's clients (default: the remote's)")
    cmd.add_argument(
        "--era",
        choices=ERA_CHOICES,
        default="auto",
        help="the protocol era to speak with the remote (default: probe, then fall back)",
    )
    cmd.set_defaults(run=run_proxy)


def run_proxy(args: argparse.Namespace) -> int:
    import anyio

    from ..proxy.opening import serve_proxy

    if args.http:
        import uvicorn  # noqa: F401  (the http extra: checked before saying we serve)

        bind(args.host, args.port).close()  # a port in use is one line, before the remote is reached
        print(f"mcpkit: proxying {args.target} on http://{args.host}:{args.port}/mcp", file=sys.stderr)
    serve = functools.partial(
        serve_proxy, args.target, http=args.http, host=args.host, port=args.port, name=args.name, era=args.era
    )
    anyio.run(serve)
    return 0
