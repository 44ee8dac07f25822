"""A protected MCP server: an ASGI wrapper that lets through only requests with a valid access token.

It serves the Protected Resource Metadata at the well-known paths of `resource`, and otherwise requires
`Authorization: Bearer <token>`, verified by a TokenVerifier, issued for `resource`, granting
`required_scopes`. The verified AccessToken is in the wrapped app's scope as `scope["mcpkit.auth"]`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Final

import orjson

from ..protocol.resource_auth import (
    AccessToken,
    AuthRefusal,
    InvalidToken,
    bearer_token,
    challenge,
    metadata_document,
    metadata_paths,
    metadata_url,
    missing_scopes,
    query_carries_token,
    same_resource,
    scope_challenge,
)
from ..transports.http_server.asgi import JSON_HEADERS, Receive, Scope, Send, respond
from .verifier import TokenVerifier, VerifierUnavailable

__all__ = ["SCOPE_KEY", "ProtectedResource", "protect"]

log = logging.getLogger(__name__)

SCOPE_KEY: Final = "mcpkit.auth"
_METADATA_METHODS: Final = "GET, HEAD, OPTIONS"


class ProtectedResource:
    """`app` behind OAuth 2.1 bearer tokens (see the module docstring); `protect(...)` builds one.

    Tokens longer than `max_token_length` characters are refused unread. A request with `access_token`
    in its query string is refused with 400 "invalid_request", even if it also has the header.
    """

    def __init__(
        self,
        app: Any,
        *,
        verifier: TokenVerifier,
        resource: str,
        authorization_servers: Sequence[str],
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Sequence[str] = (),
        resource_name: str | None = None,
        max_token_length: int = 8192,
    ) -> None:
        document = metadata_document(resource, authorization_servers, scopes_supported, resource_name)
        self.app = app
        self.verifier = verifier
        self.resource = resource
        self.scopes_supported = tuple(scopes_supported or ())
        self.required_scopes = tuple(required_scopes)
        self.max_token_length = max_token_length
        self.metadata_paths = metadata_paths(resource)
        self.metadata_url = metadata_url(resource)
        self._metadata = orjson.dumps(document)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") in self.metadata_paths:
            await self._serve_metadata(scope["method"], send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # no bearer checks for websockets here
            return
        if scope["type"] == "http":
            try:
                access = await self.authorize(scope)
            except AuthRefusal as refusal:
                await self._refuse(send, refusal)
                return
            except VerifierUnavailable as exc:
                log.warning("access token not verified: %s", exc)
                body = {"error": "temporarily_unavailable", "error_description": "tokens cannot be checked"}
                headers = [*JSON_HEADERS, (b"retry-after", b"5")]
                await respond(send, 503, orjson.dumps(body), headers)
                return
            scope = {**scope, SCOPE_KEY: access}  # a copy: the server's scope stays as it was
        await self.app(scope, receive, send)

    async def authorize(self, scope: Scope) -> AccessToken:
        """The verified token of an HTTP request; AuthRefusal says how to refuse it."""
        if query_carries_token(scope.get("query_string", b"")):
            raise AuthRefusal(400, "invalid_request", "access tokens are not accepted in the query string")
        values = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"]
        token = bearer_token(values, self.max_token_length)
        if token is None:
            raise AuthRefusal(401, None, "an access token is required", self.required_scopes)
        try:
            access = await self.verifier.verify(token)
        except InvalidToken as exc:
            raise AuthRefusal(401, "invalid_token", exc.description, self.required_scopes) from None
        # Checked here as well, so a verifier that forgets the audience cannot let a passed-through token in.
        if not any(same_resource(aud, self.resource) for aud in access.audience):
            reason = "the token was issued for another resource"
            raise AuthRefusal(401, "invalid_token", reason, self.required_scopes)
        missing = missing_scopes(access.scopes, self.required_scopes)
        if missing:
            wanted = scope_challenge(self.required_scopes, access.scopes, self.scopes_supported)
            raise AuthRefusal(403, "insufficient_scope", f"the token lacks {' '.join(missing)}", wanted)
        return access

    async def _refuse(self, send: Send, refusal: AuthRefusal) -> None:
        value = challenge(self.metadata_url, refusal.scope, refusal.error, refusal.description)
        body: dict[str, str] = {"error_description": refusal.description}
        if refusal.error:
            body = {"error": refusal.error, **body}
        headers = [*JSON_HEADERS, (b"www-authenticate", value.encode("latin-1"))]
        await respond(send, refusal.status, orjson.dumps(body), headers)

    async def _serve_metadata(self, method: str, send: Send) -> None:
        cors = [(b"access-control-allow-origin", b"*")]
        if method in ("GET", "HEAD"):
            body = self._metadata if method == "GET" else b""
            await respond(send, 200, body, [*JSON_HEADERS, *cors])
        elif method == "OPTIONS":
            allow = [(b"access-control-allow-methods", _METADATA_METHODS.encode())]
            await respond(send, 204, b"", [*cors, *allow])
        else:
            await respond(send, 405, b"", [(b"allow", _METADATA_METHODS.encode())])


def protect(
    app: Any,
    *,
    verifier: TokenVerifier,
    resource: str,
    authorization_servers: Sequence[str],
    scopes_supported: Sequence[str] | None = None,
    required_scopes: Sequence[str] = (),
    resource_name: str | None = None,
    max_token_length: int = 8192,
) -> ProtectedResource:
    """`app` (an ASGI app, e.g. a StreamableHTTPApp) behind bearer tokens, as ProtectedResource describes."""
    return ProtectedResource(
        app,
        verifier=verifier,
        resource=resource,
        authorization_servers=authorization_servers,
        scopes_supported=scopes_supported,
        required_scopes=required_scopes,
        resource_name=resource_name,
        max_token_length=max_token_length,
    )
