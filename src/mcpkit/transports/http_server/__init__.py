"""Streamable HTTP, server side: an ASGI app (`StreamableHTTPApp`) serving MCP sessions, and `serve_http`.

The modules, each one concept: `app` (routing a request), `exchange` (one request being answered),
`stateless` (a 2026-07-28 request), `sessions` (a session as the MessageStream `serve` sees), `streams`
(writing SSE and JSON answers), `registry` and `hosting` (the live sessions and where their tasks run),
`clients` (per-client caps), `tenants` (an app per tenant), `probes`, `drain`, `heartbeat` and
`forwarded` (operations), `event_store` (resumability), `asgi` (the ASGI vocabulary). This package
keeps the old module's name, so `mcpkit.transports.http_server` imports as before; its exports load
lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

__all__ = [
    "HeaderMirror",
    "MirrorsHeaders",
    "Operations",
    "SessionStream",
    "StreamableHTTPApp",
    "Tenants",
    "client_address",
    "serve_http",
    "tenant_claim",
]

_EXPORTS = {
    "HeaderMirror": "mcpkit.transports.http_server.stateless",
    "MirrorsHeaders": "mcpkit.transports.http_server.stateless",
    "Operations": "mcpkit.transports.http_server.probes",
    "SessionStream": "mcpkit.transports.http_server.sessions",
    "StreamableHTTPApp": "mcpkit.transports.http_server.app",
    "Tenants": "mcpkit.transports.http_server.tenants",
    "tenant_claim": "mcpkit.transports.http_server.tenants",
    "client_address": "mcpkit.transports.http_server.clients",
    "serve_http": "mcpkit.transports.http_server.app",
}

if TYPE_CHECKING:
    from .app import StreamableHTTPApp, serve_http
    from .clients import client_address
    from .probes import Operations
    from .sessions import SessionStream
    from .stateless import HeaderMirror, MirrorsHeaders
    from .tenants import Tenants, tenant_claim

__getattr__ = lazy_exports(__name__, _EXPORTS)
