"""`mcpkit serve`: find the Server in a file or module and serve it over stdio or Streamable HTTP.

mcpkit serve app.py                      # `server`, `mcp` or `app`, else create_server()/build_server()
mcpkit serve app.py:make_it -- --db x    # a named object or factory; the words after `--` are its argv
mcpkit serve app.py --http --host 0.0.0.0 --allow-host shop.example --reload
mcpkit serve app.py --http --api-keys keys.txt   # the endpoint behind the keys of keys.txt
mcpkit serve app.py --http --public-url https://mcp.example/mcp \
    --login-issuer https://login.example --login-client-id ID --login-client-secret-file secret.txt
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from .errors import UsageError
from .keys import check_api_keys, guarded
from .listen import bind, port_number, run_uvicorn
from .load import is_file_target, load_target, split_target, stdout_to_stderr
from .login import OPTIONS as LOGIN_OPTIONS
from .login import add_login, login_server, login_settings
from .ops import (
    add_operations,
    behind_proxies,
    configure_logs,
    operations,
    operations_settings,
    public_hosts,
    quiet_sigterm,
    uvicorn_options,
)
from .workers import add_state_key_file, check_redis_url, one_process_key, serve_workers, shared_key

__all__ = ["add_serve", "run_serve"]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
LOCAL = ("127.0.0.1", "localhost", "::1")


def add_serve(sub: Any) -> None:
    """The `serve` subcommand on the `mcpkit` parser's subparsers."""
    serve: argparse.ArgumentParser = sub.add_parser(
        "serve", help="serve a Server object (file.py[:name] or module:name) over stdio"
    )
    serve.add_argument("target", help="file.py[:NAME] or module[:NAME]; arguments after -- go to the file")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    serve.add_argument("--check", action="store_true", help="load the server, then exit (0: it loads)")
    add_state_key_file(serve)
    serve.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help="what to log on stderr (default: warnings, and the request log)",
    )
    http = serve.add_argument_group("with --http")
    http.add_argument("--host", help="address to bind (default 127.0.0.1)")
    http.add_argument("--port", type=port_number, help="port (default 8000)")
    http.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also answer requests whose Host is HOST (repeatable; localhost always is): the names "
        "clients use to reach a server bound beyond localhost",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also answer browser requests from ORIGIN, e.g. https://app.example (repeatable)",
    )
    http.add_argument("--reload", action="store_true", help="restart on code changes (mcpkit[dev])")
    _add_scale_out(http)
    http.add_argument(
        "--api-keys",
        metavar="PATH",
        help="require an API key (Authorization: Bearer KEY) from PATH: lines of 'key subject scope...', "
        "a key as itself or as sha256:<hex>",
    )
    add_login(serve)
    add_operations(serve)
    serve.set_defaults(run=run_serve)


def _add_scale_out(http: Any) -> None:
    """--workers, and where they share their sessions: --redis or --redis-cluster."""
    http.add_argument("--workers", type=int, help="worker processes (more than one needs --redis)")
    http.add_argument(
        "--redis",
        metavar="URL",
        help="share sessions in this Redis (pip install 'mcpkit[redis]'), so any worker serves any request; "
        "behind Sentinel: redis+sentinel://HOST:PORT[,HOST:PORT...]/SERVICE",
    )
    http.add_argument(
        "--redis-cluster",
        metavar="URL",
        help="share sessions in this Redis Cluster (any one node's URL; the others are discovered)",
    )


_HTTP_ONLY = (
    "host",
    "port",
    "allow_host",
    "allow_origin",
    "reload",
    "workers",
    "redis",
    "redis_cluster",
    "api_keys",
    *LOGIN_OPTIONS,
)


def _check_options(args: argparse.Namespace) -> None:
    given = [f"--{name.replace('_', '-')}" for name in _HTTP_ONLY if getattr(args, name)]
    if given and not args.http:
        need = "needs" if len(given) == 1 else "need"
        raise UsageError(f"{', '.join(given)} {need} --http (without it the server speaks stdio)")
    args.host, args.port = args.host or "127.0.0.1", args.port or 8000
    args.workers = 1 if args.workers is None else args.workers
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.redis and args.redis_cluster:
        raise UsageError("--redis and --redis-cluster: give one of them")
    args.cluster = args.redis_cluster is not None
    args.redis = args.redis or args.redis_cluster  # the URL either way; `cluster` says which kind
    if args.workers > 1 and not args.redis:
        raise UsageError("--workers above 1 needs --redis URL: each worker would know only its own sessions")
    if args.redis:
        check_redis_url(args.redis, args.cluster)
    if args.api_keys:
        check_api_keys(args.api_keys)
    args.state_key = shared_key(args.state_key_file, args.redis, args.cluster)
    public_hosts(args)  # a bad --public-url is one line before the login is built from it
    args.login = login_settings(args)


def _logging(level: str | None, log_format: str) -> None:
    configure_logs(level or "warning", log_format)  # text, or one JSON object per line
    if level is None:  # the request log (RequestLog middleware) is what a developer watches
        logging.getLogger("mcpkit.requests").setLevel(logging.INFO)


def run_serve(args: argparse.Namespace) -> int:
    """`mcpkit serve`; args.script_args: the words after `--`, the file's own arguments."""
    _check_options(args)
    ops = operations_settings(args)
    _logging(args.log_level, args.log_format)
    script_args = args.script_args
    if args.check or not args.http:
        return _serve_stdio(args)
    server = load_target(args.target, script_args)  # a bad target is one line here, in no worker
    import uvicorn  # noqa: F401  (the http extra: checked before binding)

    if args.reload:
        import watchfiles  # noqa: F401  (the dev extra)
    quiet_sigterm()
    hosts, origins = allowed(args)
    hosts += public_hosts(args)
    if args.workers > 1 or args.redis or args.reload:
        bind(args.host, args.port).close()  # in use or not allowed: one line before any worker starts
        _announce(args)
        serve_workers(
            args.target,
            host=args.host,
            port=args.port,
            workers=args.workers,
            redis_url=args.redis,
            redis_cluster=args.cluster,
            argv=script_args,
            allowed_hosts=hosts,
            allowed_origins=origins,
            reload_dir=_watched(args.target) if args.reload else None,
            log_level=args.log_level,
            operations=ops,
            api_keys=_api_keys(args),
            login=args.login,
            state_key=args.state_key,
        )
        return 0
    from ..transports.http_server import StreamableHTTPApp

    one_process_key(server, args.state_key)
    app = StreamableHTTPApp(
        server, allowed_hosts=hosts, allowed_origins=origins, operations=operations(ops, server)
    )
    login = login_server(args.login, args.state_key) if args.login else None
    app = guarded(app, _api_keys(args), login)
    sock = bind(args.host, args.port)
    _announce(args)
    run_uvicorn(behind_proxies(app, ops), sock, args.log_level, **uvicorn_options(ops))
    return 0


def _api_keys(args: argparse.Namespace) -> tuple[str, str] | None:
    """The key file and the resource its keys are for (the public URL, else the one served), if any."""
    if not args.api_keys:
        return None
    resource = args.public_url or f"http://{args.host}:{args.port}/mcp"
    return str(Path(args.api_keys).resolve()), resource


def _serve_stdio(args: argparse.Namespace) -> int:
    """Load the server (prints at import go to stderr: stdout is the protocol's) and serve it on stdio,
    or only load it (`--check`)."""
    with stdout_to_stderr():
        server = load_target(args.target, args.script_args)
    if args.check:
        print(f"mcpkit: {args.target} loads", file=sys.stderr)
        return 0
    one_process_key(server, args.state_key)
    if sys.stdin.isatty():
        print(
            f"mcpkit: serving {args.target} over stdio: waiting for a client on stdin (Ctrl-C to stop). "
            f"Try `mcpkit list {args.target}`, or serve it with --http.",
            file=sys.stderr,
        )
    server.run()
    return 0


def allowed(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The Hosts and Origins answered: localhost's always, and those the options add."""
    from ..protocol.http_rules import DEFAULT_HOSTS, DEFAULT_ORIGINS

    return [*DEFAULT_HOSTS, *args.allow_host], [*DEFAULT_ORIGINS, *args.allow_origin]


def _announce(args: argparse.Namespace) -> None:
    where = f"http://{args.host}:{args.port}/mcp"
    more = ""
    if args.redis:
        from ..cluster.startup import redacted  # the password stays out of the log

        more = f" with {args.workers} workers, sessions in {redacted(args.redis)}"
    print(f"mcpkit: serving on {where}{more}", file=sys.stderr)
    if args.login:
        upstream = args.login["upstream"]
        print(
            f"mcpkit: users sign in at {upstream['name']}, where client {upstream['client_id']} must have "
            f"the redirect URI {args.login['issuer']}/callback",
            file=sys.stderr,
        )
    if args.host not in LOCAL and not args.allow_host:
        print(
            f"mcpkit: bound to {args.host}, but only requests for localhost are answered: "
            "add --allow-host NAME for each name clients use to reach this server",
            file=sys.stderr,
        )


def _watched(target: str) -> str:
    spec = split_target(target)[0]
    return str(Path(spec).resolve().parent) if is_file_target(spec) else "."
