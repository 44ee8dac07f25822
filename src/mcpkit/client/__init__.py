"""The MCP client: `async with connect_stdio([...]) as client` or `connect_http(url)`, then typed calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["Client", "connect_http", "connect_stdio"]

_EXPORTS = dict.fromkeys(__all__, "mcpkit.client.client")

if TYPE_CHECKING:
    from .client import Client, connect_http, connect_stdio

__getattr__ = lazy_exports(__name__, _EXPORTS)
