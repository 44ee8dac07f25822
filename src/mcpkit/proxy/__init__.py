"""A proxy: a Server that fronts a remote MCP server (stdio or HTTP, either era) and re-serves it, so
a stdio-only server is offered over Streamable HTTP, or a handshake-era one to 2026-07-28 clients."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = ["Proxy", "open_proxy", "serve_proxy"]

_EXPORTS = {
    "Proxy": "mcpkit.proxy.forward",
    "open_proxy": "mcpkit.proxy.opening",
    "serve_proxy": "mcpkit.proxy.opening",
}

if TYPE_CHECKING:
    from .forward import Proxy
    from .opening import open_proxy, serve_proxy

__getattr__ = lazy_exports(__name__, _EXPORTS)
