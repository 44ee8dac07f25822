"""What the `mcpkit` command's parts raise for a one-line message and its exit code."""

from __future__ import annotations

__all__ = ["OK", "PROTOCOL", "TOOL_ERROR", "USAGE", "Failure", "UsageError"]

OK, TOOL_ERROR, USAGE, PROTOCOL = 0, 1, 2, 3


class UsageError(Exception):
    """Input the command cannot use: printed as `mcpkit: <message>`, exit code 2."""


class Failure(Exception):
    """The server could not be reached or authorized: printed as `mcpkit: <message>`, exit code 3."""
