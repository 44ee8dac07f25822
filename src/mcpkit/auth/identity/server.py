"""An OAuth 2.1 authorization server in front of an upstream identity provider: what MCP clients expect
(metadata, registration, authorize with PKCE, token, refresh, revocation) while the user signs in at the
provider the company already has, through a client the proxy registered there."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import httpx

from ...protocol.oauth_server import OAuthError, server_metadata
from ...protocol.resource_auth import AccessToken
from ...transports.http_server.asgi import ASGIMessage, Receive, Scope, Send, respond
from ..asgi import ProtectedResource
from . import endpoints
from .clients import ClientRegistry
from .login import LoginFlow
from .sealing import Keys
from .store import IdentityStore, IdentityStoreFull, MemoryIdentityStore
from .tokens import ProxyToken, TokenService
from .upstream import Upstream, UpstreamError, UpstreamTokens
from .web import send_json

__all__ = ["AuthorizationServer"]

METADATA_PATH: Final = "/.well-known/oauth-authorization-server"
_CORS: Final = ("/token", "/register", "/revoke")
_CORS_HEADERS: Final = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
    (b"access-control-allow-headers", b"authorization, content-type, mcp-protocol-version"),
]
_PATHS: Final = {
    "authorization": "/authorize",
    "token": "/token",
    "registration": "/register",
    "revocation": "/revoke",
}


class AuthorizationServer:
    """The authorization server of `resource` (an MCP server's URL), at `issuer`, signing users in at
    `upstream`. Register `callback_url` as the redirect URI of the proxy's client at the provider.

    Tokens grant `scopes` (all of them unless a client asks for fewer). `secret_key` (32 bytes or more)
    seals the provider's tokens and signs consent forms: give every worker sharing a `store` the same
    one; without it a random key is made, so nothing survives a restart. `protect(app)` serves these
    endpoints beside `app` behind the tokens they issue; the server is also an ASGI app of its own.
    Client ID metadata documents are fetched only from public addresses, never through a redirect:
    `allow_private_client_ids` (development, tests) lets them come from private, loopback and
    link-local ones; `allow_http_client_ids` lets them be http:// URLs.
    """

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        upstream: Upstream,
        scopes: Sequence[str] = ("mcp",),
        secret_key: bytes | None = None,
        store: IdentityStore | None = None,
        access_ttl: float = 3600,
        refresh_ttl: float = 30 * 86400,
        http_client: httpx.AsyncClient | None = None,
        allow_http_client_ids: bool = False,
        allow_private_client_ids: bool = False,
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self.resource = resource
        self.scopes = tuple(scopes)
        self.prefix = urlsplit(self.issuer).path
        self.callback_url = self.issuer + "/callback"
        self.store: IdentityStore = store if store is not None else MemoryIdentityStore()
        self.http = http_client or httpx.AsyncClient(timeout=10.0)
        keys = Keys(secret_key or os.urandom(32))
        self.clients = ClientRegistry(
            self.store,
            self.http,
            allow_http_client_ids=allow_http_client_ids,
            allow_private_client_ids=allow_private_client_ids,
        )
        self.tokens = TokenService(
            self.store, keys, issuer=self.issuer, access_ttl=access_ttl, refresh_ttl=refresh_ttl
        )
        self.login = LoginFlow(
            issuer=self.issuer,
            resource=resource,
            scopes=self.scopes,
            upstream=upstream,
            clients=self.clients,
            tokens=self.tokens,
            store=self.store,
            keys=keys,
            http=self.http,
            callback_url=self.callback_url,
        )
        self._serve_paths()

    def _serve_paths(self) -> None:
        """The metadata and where each endpoint is, below the issuer's path."""
        self.metadata = server_metadata(
            self.issuer, self.scopes, {k: self.prefix + v for k, v in _PATHS.items()}
        )
        self.metadata_path = METADATA_PATH + self.prefix
        own = ("/authorize", "/consent", "/callback", "/token", "/register", "/revoke")
        self.paths = frozenset({self.metadata_path, *(self.prefix + p for p in own)})
        # What a browser-based MCP client calls with fetch(): answered to any origin (no cookies there).
        self.cors_paths = frozenset({self.metadata_path, *(self.prefix + p for p in _CORS)})

    @property
    def verifier(self) -> TokenService:
        """The TokenVerifier for the tokens this server issues (for `ProtectedResource`/`protect`)."""
        return self.tokens

    def protect(self, app: Any, *, required_scopes: Sequence[str] = (), **options: Any) -> Any:
        """An ASGI app serving this authorization server's endpoints, and `app` behind its tokens
        (`options` go to ProtectedResource: resource_name, dpop, ...)."""
        guarded = ProtectedResource(
            app,
            verifier=self.tokens,
            resource=self.resource,
            authorization_servers=[self.issuer],
            scopes_supported=self.scopes,
            required_scopes=required_scopes,
            **options,
        )
        return _Beside(self, guarded)

    def handles(self, path: str) -> bool:
        """Whether `path` is one of this server's endpoints."""
        return path in self.paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http" or not self.handles(scope.get("path", "")):
            await send_json(send, 404, {"error": "not_found"})
            return
        if scope["path"] in self.cors_paths:
            if scope["method"] == "OPTIONS":
                await respond(send, 204, b"", _CORS_HEADERS)
                return
            send = _with_cors(send)
        try:
            await self._route(scope, receive, send)
        except IdentityStoreFull:
            body = {"error": "temporarily_unavailable", "error_description": "the login store is full"}
            await send_json(send, 503, body, [(b"retry-after", b"60")])

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        path, method = scope["path"][len(self.prefix) :], scope["method"]
        routes = {
            ("GET", "/authorize"): lambda: self.login.authorize(scope, send),
            ("POST", "/consent"): lambda: self.login.consent(scope, receive, send),
            ("GET", "/callback"): lambda: self.login.callback(scope, send),
            ("POST", "/token"): lambda: endpoints.token(
                scope, receive, send, self.clients, self.tokens, self.resource
            ),
            ("POST", "/register"): lambda: endpoints.register(scope, receive, send, self.clients),
            ("POST", "/revoke"): lambda: endpoints.revoke(scope, receive, send, self.clients, self.tokens),
        }
        if scope["path"] == self.metadata_path and method in ("GET", "HEAD"):
            await send_json(send, 200, self.metadata)
            return
        route = routes.get((method, path))
        if route is None:
            await send_json(
                send, 405, {"error": "invalid_request", "error_description": f"{method} is not allowed here"}
            )
            return
        await route()

    async def upstream_tokens(self, access: AccessToken | None, min_validity: float = 60) -> UpstreamTokens:
        """The provider's tokens for the user of `access` (a handler's `ctx.auth`), renewed with the
        provider's refresh token first when they expire within `min_validity` seconds.

        Raises UpstreamError when `access` is not a token of this server, or they cannot be renewed."""
        if not isinstance(access, ProxyToken) or access.upstream is None:
            raise UpstreamError("the request was not authorized by this server's login")
        tokens = access.upstream
        expires = tokens.expires_at
        if expires is None or expires - time.time() > min_validity:
            return tokens
        fresh = await self.login.upstream.renew(tokens, self.http)
        try:
            await self.tokens.reseal(access.grant_id, fresh)
        except OAuthError as exc:
            raise UpstreamError(exc.description) from None
        return fresh

    async def aclose(self) -> None:
        """Close the HTTP client this server made."""
        await self.http.aclose()


class _Beside:
    """The authorization server's endpoints beside a protected app, on one origin."""

    def __init__(self, server: AuthorizationServer, app: Any) -> None:
        self.server = server
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.server.handles(scope.get("path", "")):
            await self.server(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _with_cors(send: Send) -> Send:
    async def sending(message: ASGIMessage) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message["headers"], _CORS_HEADERS[0]]}
        await send(message)

    return sending


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
