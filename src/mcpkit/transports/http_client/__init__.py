"""Streamable HTTP, client side: `open_http_stream` and the `HTTPClientStream` it yields.

The modules: `opening` (open_http_stream), `stream` (the MessageStream over POSTs and SSE), `inbound`
(each answer decoded once), `handshake` (a session's headers),
`stateless_traffic` (2026-07-28 requests), `failures` (every failure as a JSON-RPC error), `legacy_sse`
(the 2024-11-05 HTTP+SSE fallback), `backoff` (the reconnect delay). This package keeps the old
module's name, so `mcpkit.transports.http_client` imports as before; its exports load lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

__all__ = ["HTTPClientStream", "open_http_stream"]

_EXPORTS = {
    "HTTPClientStream": "mcpkit.transports.http_client.stream",
    "open_http_stream": "mcpkit.transports.http_client.opening",
}

if TYPE_CHECKING:
    from .opening import open_http_stream
    from .stream import HTTPClientStream

__getattr__ = lazy_exports(__name__, _EXPORTS)
