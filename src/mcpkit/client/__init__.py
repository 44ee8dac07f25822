"""The MCP client: `async with connect_stdio([...]) as client` or `connect_http(url)`, then typed calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["Client", "connect_http", "connect_stdio"]

_EXPORTS = {
    "Client": "mcpkit.client.client",
    "connect_http": "mcpkit.client.connect",
    "connect_stdio": "mcpkit.client.connect",
}

if TYPE_CHECKING:
    from .client import Client
    from .connect import connect_http, connect_stdio

__getattr__ = lazy_exports(__name__, _EXPORTS)
