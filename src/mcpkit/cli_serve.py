"""`mcpkit serve`: find the Server in a file or module and serve it over stdio or Streamable HTTP.

mcpkit serve app.py                      # `server`, `mcp` or `app`, else create_server()/build_server()
mcpkit serve app.py:make_it -- --db x    # a named object or factory; the words after `--` are its argv
mcpkit serve app.py --http --host 0.0.0.0 --allow-host shop.example --reload
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from .cli_errors import UsageError
from .cli_load import is_file_target, load_target, split_target, stdout_to_stderr

__all__ = ["UsageError", "add_serve", "load_target", "run_serve", "split_script_args", "split_target"]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
LOCAL = ("127.0.0.1", "localhost", "::1")


def split_script_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`mcpkit serve x.py --http -- --db shop.db` (or `mcpkit install ... -- ...`): the words after the first
    `--` are the file's own arguments (its sys.argv[1:]), not mcpkit's."""
    words = list(argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command in ("serve", "install") and "--" in words:
        cut = words.index("--")
        return words[:cut], words[cut + 1 :]
    return words, []


def add_serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("target", help="file.py[:NAME] or module[:NAME]; arguments after -- go to the file")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    serve.add_argument("--check", action="store_true", help="load the server, then exit (0: it loads)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port with --http (default 8000)")
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also answer requests whose Host is HOST (repeatable; localhost always is): the names "
        "clients use to reach a server bound beyond localhost",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also answer browser requests from ORIGIN, e.g. https://app.example (repeatable)",
    )
    serve.add_argument(
        "--reload", action="store_true", help="restart on code changes, with --http (mcpkit[dev])"
    )
    serve.add_argument("--log-level", choices=LOG_LEVELS, help="what to log on stderr (default warning)")
    serve.add_argument(
        "--workers", type=int, default=1, help="worker processes with --http (more than one needs --redis)"
    )
    serve.add_argument(
        "--redis",
        metavar="URL",
        help="share sessions in this Redis (pip install 'mcpkit[redis]'), so any worker serves any request",
    )


def run_serve(args: argparse.Namespace, script_args: Sequence[str]) -> int:
    if args.reload and not args.http:
        raise UsageError("--reload needs --http (a restarted stdio server would lose its client)")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.workers > 1 and not args.redis:
        raise UsageError("--workers above 1 needs --redis URL: each worker would know only its own sessions")
    level = (args.log_level or "warning").upper()
    logging.basicConfig(stream=sys.stderr, level=level, format="%(levelname)s %(name)s: %(message)s")
    if args.check or not args.http:
        with stdout_to_stderr():
            server = load_target(args.target, script_args)
        if args.check:
            print(f"mcpkit: {args.target} loads", file=sys.stderr)
            return 0
        server.run()
        return 0
    server = load_target(args.target, script_args)  # a bad target is one line here, in no worker
    import uvicorn  # the http extra: checked before saying we serve

    if args.reload:
        import watchfiles  # noqa: F401  (the dev extra)
    _announce(args)
    hosts, origins = allowed(args)
    if args.workers > 1 or args.redis or args.reload:
        from .cli_workers import serve_workers

        serve_workers(
            args.target,
            host=args.host,
            port=args.port,
            workers=args.workers,
            redis_url=args.redis,
            argv=script_args,
            allowed_hosts=hosts,
            allowed_origins=origins,
            reload_dir=_watched(args.target) if args.reload else None,
            log_level=args.log_level,
        )
        return 0
    from .transports.http_server import StreamableHTTPApp

    app = StreamableHTTPApp(server, allowed_hosts=hosts, allowed_origins=origins)
    uvicorn.run(app, host=args.host, port=args.port, lifespan="on", log_level=args.log_level)
    return 0


def allowed(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The Hosts and Origins answered: localhost's always, and those the options add."""
    from .protocol.http_rules import DEFAULT_HOSTS, DEFAULT_ORIGINS

    return [*DEFAULT_HOSTS, *args.allow_host], [*DEFAULT_ORIGINS, *args.allow_origin]


def _announce(args: argparse.Namespace) -> None:
    where = f"http://{args.host}:{args.port}/mcp"
    more = f" with {args.workers} workers, sessions in {args.redis}" if args.workers > 1 or args.redis else ""
    print(f"mcpkit: serving on {where}{more}", file=sys.stderr)
    if args.host not in LOCAL and not args.allow_host:
        print(
            f"mcpkit: bound to {args.host}, but only requests for localhost are answered: "
            "add --allow-host NAME for each name clients use to reach this server",
            file=sys.stderr,
        )


def _watched(target: str) -> str:
    spec = split_target(target)[0]
    return str(Path(spec).resolve().parent) if is_file_target(spec) else "."
