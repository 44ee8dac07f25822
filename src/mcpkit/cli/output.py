"""What `mcpkit` prints: tables of tools, resources, templates and prompts (with each tool's parameters
and each prompt's arguments), and progress: a bar when the server gives a total and stderr is a terminal.

Tables and the bar use `rich` (the `cli` extra; ~15 ms to import, and only `list` and a call with progress
import it); without it the same table is printed in plain columns. Every string a server sent is made
harmless (escape.py) and given to rich as Text, never as markup.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson

from ..protocol.jsonrpc import JSON
from .escape import terminal_json, terminal_line, terminal_text

__all__ = [
    "ProgressDisplay",
    "item_rows",
    "print_table",
    "show",
    "silence_stdout",
    "stdout_closed",
    "type_name",
]

_UNFOLDED = 100_000
HEADERS = {
    "tools": ("tool", "parameter", "type", "required", "description"),
    "prompts": ("prompt", "argument", "", "required", "description"),
    "resources": ("uri", "name", "mimeType", "", "description"),
    "templates": ("uriTemplate", "name", "mimeType", "", "description"),
}


def show(result: Any, as_json: bool) -> None:
    """A result as indented JSON, or the text of its content (or contents) blocks, one per line."""
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


def type_name(schema: Any) -> str:
    """A JSON Schema's type in a few characters: string, integer[], string | null, one of a/b."""
    if not isinstance(schema, dict):
        return ""
    if isinstance(schema.get("enum"), list):
        return "one of " + "/".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        inner = type_name(schema.get("items"))
        return f"{inner}[]" if inner and " " not in inner else "array"
    if kind:
        return str(kind)
    choices = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(choices, list):
        return " | ".join(type_name(c) or "any" for c in choices)
    return ""


def _about(item: JSON) -> str:
    return str(item.get("description") or item.get("title") or "").strip().split("\n")[0]


def _parameter_rows(schema: JSON) -> list[tuple[str, ...]]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    rows: list[tuple[str, ...]] = []
    for name, prop in (properties or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        about = str(prop.get("description") or prop.get("title") or "")
        if "default" in prop:
            about = f"{about} (default {orjson.dumps(prop['default']).decode()})".strip()
        rows.append(("", name, type_name(prop), "yes" if name in required else "no", about))
    return rows


def item_rows(kind: str, items: list[JSON]) -> list[tuple[str, ...]]:
    """The rows of `kind`'s table: each tool (prompt) then its parameters (arguments)."""
    rows: list[tuple[str, ...]] = []
    for item in items:
        if kind == "tools":
            rows.append((str(item.get("name")), "", "", "", _about(item)))
            rows.extend(_parameter_rows(item.get("inputSchema") or {}))
        elif kind == "prompts":
            rows.append((str(item.get("name")), "", "", "", _about(item)))
            for arg in item.get("arguments") or []:
                needed = "yes" if arg.get("required") else "no"
                rows.append(("", str(arg.get("name")), "", needed, str(arg.get("description") or "")))
        else:
            where = item.get("uriTemplate" if kind == "templates" else "uri")
            rows.append(
                (str(where), str(item.get("name") or ""), str(item.get("mimeType") or ""), "", _about(item))
            )
    return [tuple(terminal_line(cell) for cell in row) for row in rows]


def print_table(kind: str, items: list[JSON]) -> None:
    headers = HEADERS[kind]
    keep = [i for i, h in enumerate(headers) if h]
    rows = [tuple(row[i] for i in keep) for row in item_rows(kind, items)]
    shown = tuple(headers[i] for i in keep)
    try:
        from rich import box
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ModuleNotFoundError:
        widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(shown)]
        for row in [shown, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header in shown:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError  # main's to handle, as for every other write (rich would exit 1)

    # piped, a line is as long as its row: no folding at 80 columns that splits URIs for grep or cut
    width = None if sys.stdout.isatty() else _UNFOLDED
    _Console(soft_wrap=False, width=width).print(table)


def stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (`mcpkit list URL | head -1`)."""
    try:
        import select

        poll = select.poll()
    except (ImportError, AttributeError):  # no poll(): take a broken pipe to be stdout's
        return True
    poll.register(sys.stdout.fileno(), select.POLLOUT)
    return any(mask & select.POLLERR for _, mask in poll.poll(0))


def silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class ProgressDisplay:
    """notifications/progress on stderr: a bar on a terminal when a total is known, else a counter line
    that rewrites itself."""

    def __init__(self) -> None:
        self.shown = False
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, value: float, total: float | None, message: str | None) -> None:
        self.shown = True
        if total and sys.stderr.isatty() and self._start_bar():
            from rich.markup import escape

            description = escape(terminal_line(message or ""))
            self._bar.update(self._task, completed=value, total=total, description=description)
            return
        shown = f"{value}/{total}" if total else f"{value}"
        line = f"\r[{terminal_line(shown)}] {terminal_line(message or '')}"
        print(line, end="", file=sys.stderr, flush=True)

    def _start_bar(self) -> bool:
        if self._bar is not None:
            return True
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ModuleNotFoundError:
            return False
        columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}"))
        self._bar = Progress(*columns, console=Console(stderr=True), transient=False)
        self._bar.start()
        self._task = self._bar.add_task("", total=None)
        return True

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.shown:
            print(file=sys.stderr)
