"""What the `mcpkit` command's parts raise for a one-line message, and the one table of exit codes."""

from __future__ import annotations

__all__ = [
    "EXIT_CODES",
    "INTERRUPTED",
    "LOAD",
    "OK",
    "PIPE_CLOSED",
    "PROTOCOL",
    "TOOL_ERROR",
    "USAGE",
    "Failure",
    "LoadError",
    "UsageError",
    "needs_extra",
]

OK, TOOL_ERROR, USAGE, PROTOCOL, LOAD, INTERRUPTED, PIPE_CLOSED = 0, 1, 2, 3, 4, 130, 141

EXIT_CODES = (
    (OK, "ok"),
    (TOOL_ERROR, "the tool ran and reported an error (isError)"),
    (USAGE, "usage: a bad option or argument; a tool, prompt, resource or task the server does not have"),
    (PROTOCOL, "the server could not be started, reached or authorized, or answered with a protocol error"),
    (LOAD, "serve, install: the server file failed to load (its error is shown, from your code only)"),
    (INTERRUPTED, "interrupted (Ctrl-C)"),
    (PIPE_CLOSED, "stdout's reader closed it early (`| head`): no message, the code of a SIGPIPE death"),
)


def needs_extra(extra: str, module: str | None) -> str:
    """The one line for an optional dependency that is not installed."""
    return f"this needs the {extra} extra: pip install 'mcpkit[{extra}]' (No module named {module!r})"


class UsageError(Exception):
    """Input the command cannot use: printed as `mcpkit: <message>`, exit code 2."""


class Failure(Exception):
    """The server could not be reached or authorized: printed as `mcpkit: <message>`, exit code 3."""


class LoadError(Exception):
    """The server's own code failed while loading: `report` (its traceback, the user's frames only) then
    `mcpkit: <message>`, exit code 4."""

    def __init__(self, message: str, report: str) -> None:
        super().__init__(message)
        self.report = report
