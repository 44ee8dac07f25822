"""`mcpkit serve`: find the Server in a file or module and serve it over stdio or Streamable HTTP.

mcpkit serve app.py                      # `server`, `mcp` or `app`, else create_server()/build_server()
mcpkit serve app.py:make_it -- --db x    # a named object or factory; the words after `--` are its argv
mcpkit serve app.py --http --host 0.0.0.0 --allow-host shop.example --reload
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import cli_ops
from .cli_errors import UsageError

__all__ = ["UsageError", "add_serve", "load_target", "run_serve", "split_script_args", "split_target"]

OBJECTS = ("server", "mcp", "app")  # looked for in this order when the target names nothing
FACTORIES = ("create_server", "build_server")  # then these, called with no arguments
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


def split_target(target: str) -> tuple[str, str]:
    """`file.py:NAME` or `module:NAME` as (file or module, NAME or ""); only a last `:` followed by a name
    splits, so `C:\\srv\\app.py` stays a path."""
    spec, colon, name = target.rpartition(":")
    return (spec, name) if colon and name.isidentifier() else (target, "")


def _import(spec: str, argv: Sequence[str]) -> Any:
    """The module of a file path or a dotted name, imported with sys.argv as it would run."""
    if spec.endswith(".py") or Path(spec).is_file():
        path = Path(spec).resolve()
        if not path.is_file():
            raise UsageError(f"no such file: {spec}")
        sys.argv = [str(path), *argv]
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise UsageError(f"{spec} is not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
        return module
    sys.argv = [spec, *argv]
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name is None or not spec.startswith(exc.name):
            raise  # the module exists; something it imports does not
        raise UsageError(f"no module {exc.name!r} (serve a file.py, or a module on the path)") from None


def _servable(value: Any) -> bool:
    return hasattr(value, "serve") and not isinstance(value, type)


def _pick(module: Any, spec: str) -> tuple[str, Any]:
    """The first of OBJECTS that is a Server, else the first of FACTORIES that exists."""
    for name in OBJECTS:
        if _servable(getattr(module, name, None)):
            return name, getattr(module, name)
    for name in FACTORIES:
        if callable(getattr(module, name, None)):
            return name, getattr(module, name)
    servers = [k for k, v in vars(module).items() if _servable(v)]
    hint = f"; it has {', '.join(servers)}" if servers else ""
    looked = ", ".join([*OBJECTS, *(f"{f}()" for f in FACTORIES)])
    raise UsageError(f"{spec} has none of {looked} (name the Server as {spec}:NAME{hint})")


def load_target(target: str, argv: Sequence[str] = ()) -> Any:
    """A Server from `file.py[:NAME]` or `package.module[:NAME]`; NAME is a Server or a factory taking no
    arguments, and when absent the first of OBJECTS, then FACTORIES, that the module has."""
    spec, name = split_target(target)
    module = _import(spec, argv)
    if name:
        found = getattr(module, name, None)
        if found is None:
            raise UsageError(f"{spec} has no attribute {name!r}")
    else:
        name, found = _pick(module, spec)
    if callable(found) and not _servable(found):  # a factory
        needed = [p.name for p in inspect.signature(found).parameters.values() if p.default is p.empty]
        if needed:
            raise UsageError(f"{name}() needs {', '.join(needed)}: give a Server, or a factory taking none")
        found = found()
    if not _servable(found):
        raise UsageError(f"{spec}:{name} is a {type(found).__name__}, not a Server (nothing to serve)")
    return found


def add_serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("target", help="file.py[:NAME] or module[:NAME]; arguments after -- go to the file")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
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
    cli_ops.add_operations(serve)


def run_serve(args: argparse.Namespace, script_args: Sequence[str]) -> int:
    if args.reload and not args.http:
        raise UsageError("--reload needs --http (a restarted stdio server would lose its client)")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.workers > 1 and not args.redis:
        raise UsageError("--workers above 1 needs --redis URL: each worker would know only its own sessions")
    ops = cli_ops.operations_settings(args)
    level = (args.log_level or "warning").upper()
    cli_ops.configure_logs(level, args.log_format)
    server = load_target(args.target, script_args)  # a bad target is one line here, in no worker
    if not args.http:
        server.run()
        return 0
    import uvicorn  # the http extra: checked before saying we serve

    if args.reload:
        import watchfiles  # noqa: F401  (the dev extra)
    if args.redis:
        cli_ops.check_redis(args.redis)
    _announce(args)
    cli_ops.quiet_sigterm()
    hosts, origins = allowed(args)
    hosts += cli_ops.public_hosts(args)
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
            operations=ops,
        )
        return 0
    from .transports.http_server import StreamableHTTPApp

    app = StreamableHTTPApp(
        server, allowed_hosts=hosts, allowed_origins=origins, operations=cli_ops.operations(ops, server)
    )
    app = cli_ops.behind_proxies(app, ops)
    more = cli_ops.uvicorn_options(ops)
    uvicorn.run(app, host=args.host, port=args.port, lifespan="on", log_level=args.log_level, **more)
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
    return str(Path(spec).resolve().parent) if spec.endswith(".py") or Path(spec).is_file() else "."
