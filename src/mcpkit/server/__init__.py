"""The MCP server: a `Server` with `@tool`, `@resource` and `@prompt`, and the `Context` handlers receive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["CacheHint", "Context", "Depends", "Elicited", "Server", "ToolError"]

_EXPORTS = {
    "CacheHint": "mcpkit.server.caching",
    "Context": "mcpkit.server.context",
    "Depends": "mcpkit.server.depends",
    "Elicited": "mcpkit.server.context",
    "Server": "mcpkit.server.server",
    "ToolError": "mcpkit.server.tools",
}

if TYPE_CHECKING:
    from .caching import CacheHint
    from .context import Context, Elicited
    from .depends import Depends
    from .server import Server
    from .tools import ToolError

__getattr__ = lazy_exports(__name__, _EXPORTS)
