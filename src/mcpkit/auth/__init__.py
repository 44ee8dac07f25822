"""Authorization for MCP servers over HTTP: the server as an OAuth 2.1 resource server.

`protect(app, verifier=JWTVerifier(...), resource=..., authorization_servers=[...])`.
Names load on first use, so importing the package imports neither httpx nor PyJWT.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..protocol.resource_auth import AccessToken, InvalidToken
    from .asgi import SCOPE_KEY, ProtectedResource, protect
    from .introspection import IntrospectionVerifier
    from .jwt_verifier import JWTVerifier
    from .verifier import TokenVerifier, VerifierUnavailable

__all__ = [
    "SCOPE_KEY",
    "AccessToken",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "ProtectedResource",
    "TokenVerifier",
    "VerifierUnavailable",
    "protect",
]

_HOMES = {
    "AccessToken": "..protocol.resource_auth",
    "InvalidToken": "..protocol.resource_auth",
    "SCOPE_KEY": ".asgi",
    "ProtectedResource": ".asgi",
    "protect": ".asgi",
    "IntrospectionVerifier": ".introspection",
    "JWTVerifier": ".jwt_verifier",
    "TokenVerifier": ".verifier",
    "VerifierUnavailable": ".verifier",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home, __name__), name)
