"""Many servers in one client: `ClientGroup.from_config("mcp.json")`, one catalog, routed calls, search."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

__all__ = [
    "ClientGroup",
    "Filters",
    "HttpServer",
    "ServerUnavailable",
    "StdioServer",
    "SyncClientGroup",
    "ToolIndex",
    "load_config",
    "open_group",
]

_EXPORTS = {
    "ClientGroup": "mcpkit.client.group.group",
    "Filters": "mcpkit.client.group.filters",
    "HttpServer": "mcpkit.client.group.config",
    "ServerUnavailable": "mcpkit.client.group.member",
    "StdioServer": "mcpkit.client.group.config",
    "SyncClientGroup": "mcpkit.client.group.sync",
    "ToolIndex": "mcpkit.client.group.search",
    "load_config": "mcpkit.client.group.config",
    "open_group": "mcpkit.client.group.sync",
}

if TYPE_CHECKING:
    from .config import HttpServer, StdioServer, load_config
    from .filters import Filters
    from .group import ClientGroup
    from .member import ServerUnavailable
    from .search import ToolIndex
    from .sync import SyncClientGroup, open_group

__getattr__ = lazy_exports(__name__, _EXPORTS)
