"""mcpkit: a small, fast, complete implementation of the Model Context Protocol.

The layers, each importing only those before it (tests/test_layers.py holds the rule):
protocol (sans-I/O: messages, the Connection's rules, no awaits), runtime (the Session driving a
Connection over a MessageStream, on asyncio or trio), transports (stdio; Streamable HTTP in
http_server/ and http_client/), server and client (the APIs people write against; server/ never
imports a transport), then what is built on those: auth (protecting an HTTP app), cluster (sessions
and tasks shared in Redis), proxy (a server fronting a remote one) and the `mcpkit` command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

__all__ = [
    "CapabilityError",
    "Client",
    "ConnectionFailed",
    "Context",
    "LocalError",
    "MCPError",
    "RemoteError",
    "Server",
    "ToolError",
    "__version__",
]

__version__ = "0.1.0"

# Lazy, so that importing mcpkit (or a stdio server) loads only what it uses.
_EXPORTS = {
    "Client": "mcpkit.client.client",
    "Context": "mcpkit.server.context",
    "Server": "mcpkit.server.server",
    "ToolError": "mcpkit.server.tools",
    "CapabilityError": "mcpkit.protocol.errors",
    "ConnectionFailed": "mcpkit.protocol.errors",
    "LocalError": "mcpkit.protocol.errors",
    "MCPError": "mcpkit.protocol.errors",
    "RemoteError": "mcpkit.protocol.errors",
}

if TYPE_CHECKING:
    from .client.client import Client
    from .protocol.errors import CapabilityError, ConnectionFailed, LocalError, MCPError, RemoteError
    from .server.context import Context
    from .server.server import Server
    from .server.tools import ToolError

__getattr__ = lazy_exports(__name__, _EXPORTS)
