"""The `mcpkit` command: serve a server object, or talk to any MCP server from the terminal.

Exit codes: 0 ok, 1 tool error (isError), 2 usage, 3 protocol or connection error.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import inspect
import shlex
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson

from . import __version__
from .cli_escape import terminal_json, terminal_line, terminal_text
from .cli_proxy import add_proxy, run_proxy

__all__ = ["main"]

OK, TOOL_ERROR, USAGE, PROTOCOL = 0, 1, 2, 3


class UsageError(Exception):
    pass


def load_target(target: str) -> Any:
    """A Server from `path/to/file.py[:name]` or `package.module:name` (name defaults to `server`)."""
    spec, _, name = target.partition(":")
    name = name or "server"
    if spec.endswith(".py") or Path(spec).is_file():
        path = Path(spec).resolve()
        if not path.is_file():
            raise UsageError(f"no such file: {spec}")
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(spec)
        except ModuleNotFoundError as exc:
            raise UsageError(f"no module {exc.name!r} (serve a file.py, or a module on the path)") from None
    found = getattr(module, name, None)
    if found is None:
        servers = [k for k, v in vars(module).items() if hasattr(v, "serve") and not isinstance(v, type)]
        hint = f"; it has {', '.join(servers)}" if servers else ""
        raise UsageError(f"{spec} has no attribute {name!r} (name the Server as {spec}:NAME{hint})")
    if callable(found) and not hasattr(found, "serve"):  # a factory: called with no arguments
        needed = [p.name for p in inspect.signature(found).parameters.values() if p.default is p.empty]
        if needed:
            raise UsageError(f"{name}() needs {', '.join(needed)}: give a Server, or a factory taking none")
        found = found()
    return found


def coerce(pairs: Sequence[str], schema: dict[str, Any]) -> dict[str, Any]:
    """Turn key=value words into arguments, typed by the tool's input schema."""
    properties = schema.get("properties", {})
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise UsageError(f"argument {pair!r} is not key=value")
        if properties and key not in properties and not schema.get("additionalProperties"):
            close = difflib.get_close_matches(key, list(properties), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f" (it takes {', '.join(properties)})"
            raise UsageError(f"the tool has no argument {key!r}{hint}")
        kind = properties.get(key, {}).get("type")
        if kind in ("integer", "number", "boolean", "array", "object", "null"):
            try:
                out[key] = orjson.loads(raw)
            except orjson.JSONDecodeError:
                out[key] = raw  # the server names the field that is wrong
        else:
            out[key] = raw
    return out


@asynccontextmanager
async def open_client(server: str, args: argparse.Namespace) -> AsyncIterator[Any]:
    from .client.client import connect_http, connect_stdio

    def on_log(params: dict[str, Any]) -> None:
        data = terminal_json(orjson.dumps(params.get("data")).decode())
        print(f"[{terminal_line(params.get('level'))}] {data}", file=sys.stderr)

    from .cli_prompts import sampling_by_command, terminal_elicitation

    # Without --sampling the client declares no sampling, so a server's ctx.sample() fails with a clear error.
    options: dict[str, Any] = {
        "on_log": on_log,
        "timeout": args.timeout,
        "elicitation": terminal_elicitation(),
        "elicitation_url": True,
    }
    if args.sampling:
        options["sampling"] = sampling_by_command(args.sampling)
    if server.startswith(("http://", "https://")):
        async with connect_http(server, **options) as client:
            yield client
        return
    async with connect_stdio(shlex.split(server), **options) as client:
        yield client


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
            show(await client.read_resource(args.uri), args.json)
            return OK
        if args.command == "prompt":
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
    kind = args.kind
    fetch = {
        "tools": client.list_all_tools,
        "resources": client.list_all_resources,
        "templates": client.list_all_resource_templates,
        "prompts": client.list_all_prompts,
    }[kind]
    items = await fetch()
    if args.json:
        show(items, True)
        return OK
    for item in items:
        label = item.get("name") if kind != "resources" else item.get("uri")
        if kind == "templates":
            label = item.get("uriTemplate")
        about = item.get("title") or item.get("description") or ""
        print(f"{terminal_line(label):<32} {terminal_line(about)}".rstrip())
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


async def call(client: Any, args: argparse.Namespace) -> int:
    tools = {t["name"]: t for t in await client.list_all_tools()}
    tool = tools.get(args.tool)
    if tool is None:
        close = difflib.get_close_matches(args.tool, list(tools), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"unknown tool {args.tool!r}{hint}")
    try:
        arguments = orjson.loads(args.json_args) if args.json_args else None
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"--args is not JSON: {exc}") from None
    if arguments is None:
        arguments = coerce(args.pairs, tool.get("inputSchema", {}))

    shown_progress: list[bool] = []

    def progress(value: float, total: float | None, message: str | None) -> None:
        shown_progress.append(True)
        shown = f"{value}/{total}" if total else f"{value}"
        print(
            f"\r[{terminal_line(shown)}] {terminal_line(message or '')}", end="", file=sys.stderr, flush=True
        )

    if args.task:
        result = await call_as_task(client, args.tool, arguments)
    else:
        result = await client.call_tool(args.tool, arguments, on_progress=progress)
    if shown_progress:
        print(file=sys.stderr)
    if args.json:
        show(result, True)
    else:
        show(result, False)
    return TOOL_ERROR if result.get("isError") else OK


def add_serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("target")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port with --http (default 8000)")
    serve.add_argument(
        "--workers", type=int, default=1, help="worker processes with --http (more than one needs --redis)"
    )
    serve.add_argument(
        "--redis",
        metavar="URL",
        help="share sessions in this Redis (pip install 'mcpkit[redis]'), so any worker serves any request",
    )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="mcpkit", description="Serve and talk to Model Context Protocol servers."
    )
    top.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    add_serve(
        sub.add_parser("serve", help="serve a Server object (file.py[:name] or module:name) over stdio")
    )
    add_proxy(sub)
    for name, helptext in (
        ("list", "list tools, resources, templates or prompts"),
        ("call", "call a tool"),
        ("read", "read a resource"),
        ("prompt", "get a prompt"),
        ("ping", "ping a server"),
    ):
        cmd = sub.add_parser(name, help=helptext)
        cmd.add_argument("server", help="an http(s) URL, or a command line that starts a stdio server")
        cmd.add_argument("--json", action="store_true", help="print the raw result as JSON")
        cmd.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each answer")
        cmd.add_argument(
            "--sampling", metavar="CMD", help="answer sampling requests by running CMD (JSON in/out)"
        )
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
    return top


def serve_cluster(args: argparse.Namespace) -> int:
    """`serve --http --workers N --redis URL`: worker processes sharing their sessions in Redis."""
    if args.workers > 1 and not args.redis:
        raise UsageError("--workers above 1 needs --redis URL: each worker would know only its own sessions")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    from .cli_workers import serve_workers

    load_target(args.target)  # a bad target is one line here, not a traceback in every worker
    where = f"http://{args.host}:{args.port}/mcp"
    print(
        f"mcpkit: serving on {where} with {args.workers} worker(s), sessions in {args.redis}", file=sys.stderr
    )
    serve_workers(args.target, host=args.host, port=args.port, workers=args.workers, redis_url=args.redis)
    return OK


_EXTRAS = {"uvicorn": "http", "httpx": "http", "starlette": "http", "redis": "redis", "jwt": "oauth"}


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from .protocol.errors import MISSING_CLIENT_CAPABILITY, MCPError

    try:
        if args.command == "proxy":
            return run_proxy(args)
        if args.command == "serve":
            if args.http and (args.workers > 1 or args.redis):
                return serve_cluster(args)
            server = load_target(args.target)
            if args.http:
                import uvicorn  # noqa: F401  (the http extra: checked before saying we serve)

                from .transports.http_server import serve_http

                print(f"mcpkit: serving on http://{args.host}:{args.port}/mcp", file=sys.stderr)
                serve_http(server, host=args.host, port=args.port)
            else:
                server.run()
            return OK
        return anyio.run(run_command, args)
    except UsageError as exc:
        print(f"mcpkit: {terminal_line(exc)}", file=sys.stderr)
        return USAGE
    except MCPError as exc:
        hint = ""
        if exc.message == "Connection closed":
            hint = " (the server exited or closed the connection; its own stderr, if any, is above)"
        elif exc.code == MISSING_CLIENT_CAPABILITY and "sampling" in str(exc.data):
            hint = " (pass --sampling CMD to answer sampling requests)"
        print(f"mcpkit: error {exc.code}: {terminal_line(exc.message)}{hint}", file=sys.stderr)
        return PROTOCOL
    except OSError as exc:
        print(f"mcpkit: could not start or reach the server: {exc}", file=sys.stderr)
        return PROTOCOL
    except ModuleNotFoundError as exc:  # an extra not installed
        extra = _EXTRAS.get((exc.name or "").partition(".")[0])
        if extra is None:
            raise
        print(f"mcpkit: this needs the {extra} extra: pip install 'mcpkit[{extra}]' ({exc})", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("\nmcpkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
