"""`mcpkit call SERVER TOOL key=value ...`: call a tool, the words typed becoming its arguments as its
input schema types them (`--args JSON` gives them whole; `--task` asks for a task and shows its status).

A value is JSON where the schema's type for that key is not only a string: numbers, booleans, null, and
lists and objects (`tags='["a","b"]'`, `meta='{"k": 1}'`), also inside an anyOf such as an optional list.
A key the schema does not have is refused with the closest name; a list or object that is not JSON is
refused with an example. A number that does not parse goes to the server, whose error names the field.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from .connect import add_client_options, client_command
from .errors import OK, TOOL_ERROR, UsageError
from .escape import terminal_line
from .output import ProgressDisplay, show

__all__ = ["add_call", "coerce", "known", "schema_types"]

_JSON_KINDS = {"integer", "number", "boolean", "array", "object", "null"}
_OF_PYTHON = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def schema_types(schema: Any) -> set[str]:
    """The JSON types a property's schema allows: its type (or types), or those of its anyOf/oneOf."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    found: set[str] = set()
    for choice in (schema.get("anyOf") or []) + (schema.get("oneOf") or []):
        found |= schema_types(choice)
    if not found and isinstance(schema.get("enum"), list):
        found = {_OF_PYTHON.get(type(v), "string") for v in schema["enum"]}
    return found


def _fits(value: Any, allowed: set[str]) -> bool:
    kind = _OF_PYTHON.get(type(value), "")
    return kind in allowed or (kind == "integer" and "number" in allowed)


def _value(key: str, raw: str, allowed: set[str]) -> Any:
    if not allowed & _JSON_KINDS:
        return raw
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        value, problem = raw, f"not JSON: {exc}"
    else:
        if _fits(value, allowed):
            return value
        problem = f"a JSON {_OF_PYTHON.get(type(value), 'value')}"
    if "string" in allowed:
        return raw
    if allowed & {"array", "object"} and not allowed & {"integer", "number", "boolean"}:
        example = f'{key}=\'["a", "b"]\'' if "array" in allowed else f"{key}='{{\"name\": 1}}'"
        wanted = " or ".join(sorted(allowed - {"null"}))
        raise UsageError(f"argument {key!r} takes a JSON {wanted}, e.g. {example} (got {problem})")
    return value  # a bad number or boolean: the server's error names the field


def coerce(pairs: Sequence[str], schema: dict[str, Any]) -> dict[str, Any]:
    """Turn key=value words into arguments, typed by the tool's input schema."""
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise UsageError(f"argument {pair!r} is not key=value")
        if properties and key not in properties and not schema.get("additionalProperties"):
            close = difflib.get_close_matches(key, list(properties), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f" (it takes {', '.join(properties)})"
            raise UsageError(f"the tool has no argument {key!r}{hint}")
        out[key] = _value(key, raw, schema_types(properties.get(key)))
    return out


def add_call(sub: Any) -> None:
    """The `call` subcommand on the `mcpkit` parser's subparsers."""
    cmd: argparse.ArgumentParser = sub.add_parser("call", help="call a tool")
    add_client_options(cmd)
    cmd.add_argument("tool")
    cmd.add_argument("pairs", nargs="*", metavar="key=value")
    cmd.add_argument("--args", dest="json_args", help="the arguments as one JSON object")
    cmd.add_argument(
        "--task",
        action="store_true",
        help="ask for a task (2026-07-28 tasks extension); show its status",
    )
    cmd.set_defaults(run=client_command(call))


def known(name: str, kind: str, names: list[str]) -> None:
    """UsageError (exit 2) for a tool or prompt the server does not have, with the closest names."""
    if name not in names:
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UsageError(f"unknown {kind} {name!r}{hint}")


async def call(client: Any, args: argparse.Namespace) -> int:
    tools = {t["name"]: t for t in await client.list_all_tools()}
    known(args.tool, "tool", list(tools))
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
    show(result, args.json)
    return TOOL_ERROR if result.get("isError") else OK


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
