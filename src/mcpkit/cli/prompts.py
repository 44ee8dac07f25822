"""What the `mcpkit` command answers when a server asks for elicitation: a form at the terminal (sampling by
command is in sampling.py)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from ..protocol.jsonrpc import JSON
from .escape import terminal_line, terminal_text
from .form import SKIP, ask_field

__all__ = ["terminal_elicitation"]


def _ask(prompt: str, stdin: TextIO) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = stdin.readline()
    if not line:
        raise EOFError
    return line.strip()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at the prompt itself while the form is asked (the event loop's own
    SIGINT handler would only note it, and the form would go on to its end)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _form(params: JSON, stdin: TextIO) -> JSON:
    if params.get("mode") == "url":
        _say(f"  open: {terminal_line(params.get('url'))}")
        done = _ask("  done? [y/n]: ", stdin).lower() in ("y", "yes")
        return {"action": "accept" if done else "decline"}
    schema = params.get("requestedSchema") or {}
    required = set(schema.get("required") or [])
    content = {}
    for name, prop in (schema.get("properties") or {}).items():
        value = ask_field(
            name, prop if isinstance(prop, dict) else {}, name in required, lambda p: _ask(p, stdin), _say
        )
        if value is not SKIP:
            content[name] = value
    if _ask("  send this answer? [y/n]: ", stdin).lower() not in ("y", "yes"):
        return {"action": "decline"}
    return {"action": "accept", "content": content}


def terminal_elicitation(stdin: TextIO = sys.stdin) -> Callable[[JSON], JSON]:
    """Ask the person at the terminal: a form built from requestedSchema, each answer checked against it;
    URL mode prints the URL. Ctrl-C or end of input cancels the form at once."""

    def answer(params: JSON) -> JSON:
        _say(f"\nThe server asks: {terminal_text(params.get('message', ''))}")
        try:
            with _interruptible():
                return _form(params, stdin)
        except (EOFError, KeyboardInterrupt):
            _say("\n  cancelled")
            return {"action": "cancel"}

    return answer
