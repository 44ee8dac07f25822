"""Authorization for MCP servers over HTTP: the server as an OAuth 2.1 resource server.

`protect(app, verifier=JWTVerifier(...), resource=..., authorization_servers=[...])`.
Names load on first use, so importing the package imports neither httpx nor PyJWT.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken, InvalidToken
    from .api_keys import APIKey, APIKeyFile, APIKeyVerifier, hash_api_key, new_api_key
    from .asgi import SCOPE_KEY, ProtectedResource, protect
    from .dpop import DPoPChecker
    from .introspection import IntrospectionVerifier
    from .jwt_verifier import JWTVerifier
    from .replay import InMemoryReplayStore, ReplayStore
    from .verifier import AnyVerifier, TokenVerifier, VerifierUnavailable

__all__ = [
    "SCOPE_KEY",
    "APIKey",
    "APIKeyFile",
    "APIKeyVerifier",
    "AccessToken",
    "AnyVerifier",
    "DPoPChecker",
    "InMemoryReplayStore",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "ProtectedResource",
    "ReplayStore",
    "TokenVerifier",
    "VerifierUnavailable",
    "hash_api_key",
    "new_api_key",
    "protect",
]

_HOMES = {
    "APIKey": "mcpkit.auth.api_keys",
    "APIKeyFile": "mcpkit.auth.api_keys",
    "APIKeyVerifier": "mcpkit.auth.api_keys",
    "hash_api_key": "mcpkit.auth.api_keys",
    "new_api_key": "mcpkit.auth.api_keys",
    "AnyVerifier": "mcpkit.auth.verifier",
    "AccessToken": "mcpkit.protocol.resource_auth",
    "InvalidToken": "mcpkit.protocol.resource_auth",
    "SCOPE_KEY": "mcpkit.auth.asgi",
    "ProtectedResource": "mcpkit.auth.asgi",
    "protect": "mcpkit.auth.asgi",
    "DPoPChecker": "mcpkit.auth.dpop",
    "IntrospectionVerifier": "mcpkit.auth.introspection",
    "JWTVerifier": "mcpkit.auth.jwt_verifier",
    "InMemoryReplayStore": "mcpkit.auth.replay",
    "ReplayStore": "mcpkit.auth.replay",
    "TokenVerifier": "mcpkit.auth.verifier",
    "VerifierUnavailable": "mcpkit.auth.verifier",
}


__getattr__ = lazy_exports(__name__, _HOMES)
