"""Transports: stdio (serve and spawn) and Streamable HTTP (an ASGI app and an httpx client stream)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

__all__ = [
    "EventStore",
    "InMemoryEventStore",
    "StreamableHTTPApp",
    "open_http_stream",
    "serve_http",
    "serve_stdio",
    "spawn",
]

_EXPORTS = {
    "EventStore": "mcpkit.transports.http_server.event_store",
    "InMemoryEventStore": "mcpkit.transports.http_server.event_store",
    "StreamableHTTPApp": "mcpkit.transports.http_server",
    "open_http_stream": "mcpkit.transports.http_client",
    "serve_http": "mcpkit.transports.http_server",
    "serve_stdio": "mcpkit.transports.stdio",
    "spawn": "mcpkit.transports.stdio",
}

if TYPE_CHECKING:
    from .http_client import open_http_stream
    from .http_server import StreamableHTTPApp, serve_http
    from .http_server.event_store import EventStore, InMemoryEventStore
    from .stdio import serve_stdio, spawn

__getattr__ = lazy_exports(__name__, _EXPORTS)
