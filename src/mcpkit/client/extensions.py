"""Calling the methods an extension adds (SEP-2133) from a Client.

    result = await call_extension(client, "io.example/search", "search/run", {"q": "mcp"})

The method is sent only to a server that declared the extension (CapabilityError otherwise, before
anything is sent). In 2026-07-28 the request declares the extension in its own `_meta`; in the
initialize era the client declared it in initialize (`Client(extensions={...})`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.extensions import declaring, extension_rule, settings_of
from ..protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from .client import Client

__all__ = ["call_extension", "server_extension"]


def server_extension(client: Client, identifier: str) -> JSON | None:
    """The settings the server declared for extension `identifier`, or None if it did not."""
    return settings_of(client.server_capabilities, identifier)


async def call_extension(client: Client, identifier: str, method: str, params: JSON | None = None) -> JSON:
    """Send `method` of extension `identifier`; the result (errors raise as for any request)."""
    connection = client.session.connection
    connection.extension_rules.setdefault(method, extension_rule(identifier))
    params = dict(params or {})
    if client.stateless:
        own = settings_of(connection.capabilities, identifier)
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **declaring(identifier, own)}
    return await client.request(method, params)
