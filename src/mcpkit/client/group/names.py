"""The names a group gives its servers' tools and prompts: `server.tool`, or another separator.

Spec 2025-11-25 server/tools "Tool Names": 1 to 128 characters, only ASCII letters, digits, `_`, `-`
and `.`. A server name may not contain the separator, so a catalog name splits at its first separator
into exactly one server and that server's own name: prefixes never overlap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["COLLISIONS", "Naming", "NamingError", "valid_tool_name"]

_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,128}")
COLLISIONS: Final = ("prefix", "first", "error")


def valid_tool_name(name: str) -> bool:
    """Whether `name` follows the spec's tool-name rules."""
    return _TOOL_NAME.fullmatch(name) is not None


class NamingError(ValueError):
    """A server name, separator or collision policy the group cannot name tools with."""


@dataclass(frozen=True)
class Naming:
    """How catalog names are made.

    `prefix`: every name is `server{separator}name`. Without it names stay bare, and `collisions` says
    what happens when two servers offer the same one: "prefix" (those get their server's prefix),
    "first" (the first server in config order keeps it, the others' are dropped and reported), "error"
    (the catalog refuses to build).
    """

    separator: str = "."
    prefix: bool = True
    collisions: str = "prefix"

    def __post_init__(self) -> None:
        if not self.separator or not valid_tool_name(self.separator):
            raise NamingError(f"the separator {self.separator!r} is not made of tool-name characters")
        if self.collisions not in COLLISIONS:
            raise NamingError(f"collisions is one of {', '.join(COLLISIONS)}, not {self.collisions!r}")

    def check_server(self, server: str) -> None:
        """A server name must be tool-name characters without the separator (so prefixes split cleanly)."""
        if not valid_tool_name(server) or self.separator in server:
            raise NamingError(
                f"server name {server!r}: use letters, digits, _, - or . but not the separator "
                f"{self.separator!r}"
            )

    def join(self, server: str, name: str) -> str:
        return f"{server}{self.separator}{name}"

    def split(self, name: str) -> tuple[str, str] | None:
        """(server, its own name) for a prefixed name; None when `name` has no separator."""
        server, sep, rest = name.partition(self.separator)
        return (server, rest) if sep and rest else None
