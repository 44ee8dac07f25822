"""Login through the identity provider a company already has: an OAuth 2.1 authorization server for MCP
clients (metadata, registration, client ID metadata documents, PKCE, refresh, revocation) that signs users
in at an upstream OAuth 2.0 / OpenID Connect provider, after a consent page of its own.

`AuthorizationServer(issuer=..., resource=..., upstream=Upstream(...)).protect(app)`. Needs the `oauth`
extra (httpx, PyJWT with cryptography). Names load on use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .server import AuthorizationServer
    from .store import IdentityStore, IdentityStoreFull, MemoryIdentityStore
    from .tokens import ProxyToken
    from .upstream import Upstream, UpstreamError, UpstreamTokens

__all__ = [
    "AuthorizationServer",
    "IdentityStore",
    "IdentityStoreFull",
    "MemoryIdentityStore",
    "ProxyToken",
    "Upstream",
    "UpstreamError",
    "UpstreamTokens",
]

_HOMES = {
    "AuthorizationServer": "mcpkit.auth.identity.server",
    "IdentityStore": "mcpkit.auth.identity.store",
    "IdentityStoreFull": "mcpkit.auth.identity.store",
    "MemoryIdentityStore": "mcpkit.auth.identity.store",
    "ProxyToken": "mcpkit.auth.identity.tokens",
    "Upstream": "mcpkit.auth.identity.upstream",
    "UpstreamError": "mcpkit.auth.identity.upstream",
    "UpstreamTokens": "mcpkit.auth.identity.upstream",
}

__getattr__ = lazy_exports(__name__, _HOMES)
