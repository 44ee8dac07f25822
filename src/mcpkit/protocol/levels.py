"""Log levels of RFC 5424 as MCP names them (server utilities "Logging")."""

from __future__ import annotations

from typing import Final

__all__ = ["LEVELS", "severity"]

# Ordered from least to most severe.
LEVELS: Final[tuple[str, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_SEVERITY: Final[dict[str, int]] = {name: i for i, name in enumerate(LEVELS)}


def severity(level: str) -> int | None:
    """The rank of `level` (higher is more severe), or None for a name RFC 5424 does not have."""
    return _SEVERITY.get(level)
