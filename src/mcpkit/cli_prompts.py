"""What the `mcpkit` command answers when a server asks: elicitation at the terminal, sampling by command."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Callable
from typing import Any, TextIO

import orjson

from .cli_escape import terminal_line, terminal_text

__all__ = ["sampling_by_command", "terminal_elicitation"]

JSON = dict[str, Any]


def _ask(prompt: str, stdin: TextIO) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = stdin.readline()
    if not line:
        raise EOFError
    return line.strip()


def _field(name: str, schema: JSON, required: bool, stdin: TextIO) -> Any:
    kind = schema.get("type")
    options = schema.get("enum") or [o.get("const") for o in schema.get("oneOf", [])]
    hint = f" [{'/'.join(map(terminal_line, options))}]" if options else " [y/n]" if kind == "boolean" else ""
    default = schema.get("default")
    label = terminal_line(schema.get("title") or schema.get("description") or name)
    while True:
        shown_default = "" if default is None else f" ({terminal_line(default)})"
        raw = _ask(f"  {label}{hint}{shown_default}: ", stdin)
        if not raw:
            if default is not None or not required:
                return default
            continue
        if kind == "boolean":
            return raw.lower() in ("y", "yes", "true", "1")
        if kind in ("integer", "number"):
            try:
                return int(raw) if kind == "integer" else float(raw)
            except ValueError:
                print(f"  {terminal_line(name)} must be a {terminal_line(kind)}", file=sys.stderr)
                continue
        return raw


def terminal_elicitation(stdin: TextIO = sys.stdin) -> Callable[[JSON], JSON]:
    """Ask the person at the terminal: a form built from requestedSchema; URL mode prints the URL."""

    def answer(params: JSON) -> JSON:
        print(f"\nThe server asks: {terminal_text(params.get('message', ''))}", file=sys.stderr)
        try:
            if params.get("mode") == "url":
                print(f"  open: {terminal_line(params.get('url'))}", file=sys.stderr)
                done = _ask("  done? [y/n]: ", stdin).lower() in ("y", "yes")
                return {"action": "accept" if done else "decline"}
            schema = params.get("requestedSchema", {})
            required = set(schema.get("required", []))
            content = {}
            for name, prop in schema.get("properties", {}).items():
                value = _field(name, prop, name in required, stdin)
                if value is not None:
                    content[name] = value
            if _ask("  send this answer? [y/n]: ", stdin).lower() not in ("y", "yes"):
                return {"action": "decline"}
            return {"action": "accept", "content": content}
        except EOFError:
            return {"action": "cancel"}

    return answer


def sampling_by_command(command: str) -> Callable[[JSON], JSON]:
    """Answer sampling/createMessage by running `command`: params as JSON on stdin, the result on stdout."""

    def sample(params: JSON) -> JSON:
        done = subprocess.run(
            shlex.split(command), input=orjson.dumps(params), capture_output=True, timeout=300
        )
        if done.returncode != 0:
            raise RuntimeError(f"the --sampling command failed: {done.stderr.decode(errors='replace')[:200]}")
        result: JSON = orjson.loads(done.stdout)
        return result

    return sample
