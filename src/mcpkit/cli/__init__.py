"""The `mcpkit` command: serve a server object, or talk to any MCP server from the terminal.

Each command lives in a module of this package and adds its own subparser (commands.py lists them), with
the function that runs it as the subparser's `run`; main calls it and maps the errors to exit codes
(errors.EXIT_CODES, shown by `mcpkit --help`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .._extras import MissingExtra
from .commands import parse
from .errors import (
    INTERRUPTED,
    LOAD,
    PIPE_CLOSED,
    PROTOCOL,
    USAGE,
    Failure,
    LoadError,
    UsageError,
    needs_extra,
)
from .escape import terminal_line
from .output import silence_stdout, stdout_closed

__all__ = ["main"]

_EXTRAS = {
    "uvicorn": "http",
    "httpx": "http",
    "starlette": "http",
    "redis": "redis",
    "jwt": "oauth",
    "watchfiles": "dev",
}


def _protocol_line(exc: Any, args: argparse.Namespace) -> str:
    """An MCPError as one line, with what to do about the common ones."""
    from ..protocol.errors import MISSING_CLIENT_CAPABILITY

    hint = ""
    if exc.message == "Connection closed":
        hint = " (the server exited or closed the connection; its own stderr, if any, is above)"
    elif "HTTP 401 " in exc.message and not getattr(args, "auth", None):
        hint = " (pass --header 'Authorization: Bearer TOKEN', or --auth oauth)"
    elif exc.code == MISSING_CLIENT_CAPABILITY and "sampling" in str(exc.data):
        hint = " (pass --sampling CMD to answer sampling requests)"
    return f"mcpkit: error {exc.code}: {terminal_line(exc.message)}{hint}"


def main(argv: Sequence[str] | None = None) -> int:
    """The `mcpkit` command: parse `argv` (default sys.argv[1:]), run the command each subparser names as
    its `run`, and turn what it raises into one line on stderr and an exit code (errors.EXIT_CODES)."""
    args = parse(sys.argv[1:] if argv is None else argv)
    from ..protocol.errors import ConnectionFailed, MCPError

    try:
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except LoadError as exc:
        print(exc.report, end="", file=sys.stderr)
        print(f"mcpkit: {exc}", file=sys.stderr)
        return LOAD
    except UsageError as exc:
        print(f"mcpkit: {terminal_line(exc)}", file=sys.stderr)
        return USAGE
    except ConnectionFailed as exc:
        print(f"mcpkit: {terminal_line(exc.message)}", file=sys.stderr)
        return PROTOCOL
    except MCPError as exc:
        print(_protocol_line(exc, args), file=sys.stderr)
        return PROTOCOL
    except TimeoutError as exc:
        print(f"mcpkit: timeout: {exc}", file=sys.stderr)
        return PROTOCOL
    except Failure as exc:
        print(f"mcpkit: {exc}", file=sys.stderr)
        return PROTOCOL
    except BrokenPipeError as exc:
        if stdout_closed():  # the reader stopped early (`| head`): nothing to say, as coreutils say nothing
            silence_stdout()
            return PIPE_CLOSED
        print(f"mcpkit: could not start or reach the server: {exc}", file=sys.stderr)
        return PROTOCOL
    except OSError as exc:
        print(f"mcpkit: could not start or reach the server: {exc}", file=sys.stderr)
        return PROTOCOL
    except ModuleNotFoundError as exc:  # an extra not installed
        extra = (
            exc.extra if isinstance(exc, MissingExtra) else _EXTRAS.get((exc.name or "").partition(".")[0])
        )
        if extra is None:
            raise
        print(f"mcpkit: {needs_extra(extra, exc.name)}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("\nmcpkit: interrupted", file=sys.stderr)
        return INTERRUPTED
