"""A protected MCP server: an ASGI wrapper that lets through only requests with a valid access token.

It serves the Protected Resource Metadata at the well-known paths of `resource`, and otherwise requires
`Authorization: Bearer <token>` (or `DPoP <token>` with a DPoP proof, RFC 9449), verified by a
TokenVerifier, issued for `resource`, granting `required_scopes`. The verified AccessToken is in the
wrapped app's scope as `scope["mcpkit.auth"]`. A resource naming no authorization server (API keys only,
`APIKeyVerifier`) serves no metadata, and its challenges name `realm` instead.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from typing import Any, Final

import orjson

from ..protocol.dpop_proof import ReplayCheckUnavailable, bound_thumbprint, dpop_challenge
from ..protocol.resource_auth import (
    AccessToken,
    AuthRefusal,
    InvalidToken,
    challenge,
    credentials,
    metadata_document,
    metadata_paths,
    metadata_url,
    missing_scopes,
    query_carries_token,
    same_resource,
    scope_challenge,
)
from ..transports.http_server.asgi import AUTH_SCOPE_KEY, JSON_HEADERS, Receive, Scope, Send, respond
from .dpop import DPoPChecker, DPoPOption, Proof, dpop_checker
from .verifier import TokenVerifier, VerifierUnavailable

__all__ = ["SCOPE_KEY", "ProtectedResource", "protect"]

log = logging.getLogger(__name__)

SCOPE_KEY: Final = AUTH_SCOPE_KEY
_METADATA_METHODS: Final = "GET, HEAD, OPTIONS"


class ProtectedResource:
    """`app` (an ASGI app, e.g. a StreamableHTTPApp) behind OAuth 2.1 bearer tokens (see the module
    docstring); `protect` is another name for it.

    Tokens longer than `max_token_length` characters are refused unread. A request with `access_token`
    in its query string is refused with 400 "invalid_request", even if it also has the header.
    dpop: "allowed" (Bearer and DPoP-bound tokens; a bound token only with a proof by its key),
    "required" (DPoP-bound tokens only), "disabled" (Bearer only, and bound tokens refused), or a
    DPoPChecker with other limits. While DPoP is on, challenges offer it beside Bearer.
    Without `authorization_servers` (static API keys: no client can obtain a token) the metadata paths
    are 404 and the challenges are `Bearer realm="<resource>"`: nothing points a client at OAuth.
    """

    def __init__(
        self,
        app: Any,
        *,
        verifier: TokenVerifier,
        resource: str,
        authorization_servers: Sequence[str] = (),
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Sequence[str] = (),
        resource_name: str | None = None,
        max_token_length: int = 8192,
        dpop: DPoPOption | DPoPChecker = "allowed",
    ) -> None:
        document = None
        if authorization_servers:
            document = metadata_document(resource, authorization_servers, scopes_supported, resource_name)
        self.app = app
        self.verifier = verifier
        self.resource = resource
        self.scopes_supported = tuple(scopes_supported or ())
        self.required_scopes = tuple(required_scopes)
        self.max_token_length = max_token_length
        self.dpop = dpop_checker(dpop)
        self.metadata_paths = metadata_paths(resource)
        self.metadata_url = metadata_url(resource) if document is not None else None
        self._metadata = orjson.dumps(document) if document is not None else None

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
                await _unavailable(send, "tokens cannot be checked", 5)
                return
            except ReplayCheckUnavailable as exc:
                log.warning("DPoP proof not checked for replay: %s", exc)
                await _unavailable(send, exc.description, exc.retry_after)
                return
            scope = {**scope, SCOPE_KEY: access}  # a copy: the server's scope stays as it was
            try:
                await self.app(scope, receive, send)
            except AuthRefusal as refusal:  # the app found the request needs more (a tool's scopes)
                wanted = scope_challenge(refusal.scope, access.scopes, self.scopes_supported)
                scheme = "DPoP" if bound_thumbprint(access.claims) is not None else "Bearer"
                await self._refuse(send, dataclasses.replace(refusal, scope=wanted, scheme=scheme))
            return
        await self.app(scope, receive, send)

    async def authorize(self, scope: Scope) -> AccessToken:
        """The verified token of an HTTP request; AuthRefusal says how to refuse it."""
        if query_carries_token(scope.get("query_string", b"")):
            raise AuthRefusal(400, "invalid_request", "access tokens are not accepted in the query string")
        values = [v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"authorization"]
        schemes = ("bearer",) if self.dpop is None else ("bearer", "dpop")
        found = credentials(values, self.max_token_length, schemes)
        if found is None:
            raise AuthRefusal(401, None, "an access token is required", self.required_scopes)
        scheme, token = found
        try:
            return await self._check(scope, scheme, token)
        except AuthRefusal as refusal:
            raise dataclasses.replace(refusal, scope=refusal.scope or self.required_scopes) from None

    async def _check(self, scope: Scope, scheme: str, token: str) -> AccessToken:
        proof: Proof | None = None
        if self.dpop is not None and scheme == "dpop":
            proof = self.dpop.read(scope, token, self.resource)
        elif self.dpop is not None and self.dpop.required:
            raise AuthRefusal(401, "invalid_token", "only DPoP-bound tokens are accepted", scheme="DPoP")
        challenged = "DPoP" if proof is not None else "Bearer"
        try:
            access = await self.verifier.verify(token)
        except InvalidToken as exc:
            raise AuthRefusal(401, "invalid_token", exc.description, scheme=challenged) from None
        bound_to = bound_thumbprint(access.claims)
        if proof is not None and self.dpop is not None:
            await self.dpop.accept(proof, bound_to)
        elif bound_to is not None:  # RFC 9449 §7.2: a bound token presented as Bearer is refused
            reason = "a DPoP-bound token needs the DPoP scheme and a proof"
            raise AuthRefusal(401, "invalid_token", reason, scheme="DPoP" if self.dpop else "Bearer")
        # Checked here as well, so a verifier that forgets the audience cannot let a passed-through token in.
        if not any(same_resource(aud, self.resource) for aud in access.audience):
            raise AuthRefusal(
                401, "invalid_token", "the token was issued for another resource", scheme=challenged
            )
        missing = missing_scopes(access.scopes, self.required_scopes)
        if missing:
            wanted = scope_challenge(self.required_scopes, access.scopes, self.scopes_supported)
            reason = f"the token lacks {' '.join(missing)}"
            raise AuthRefusal(403, "insufficient_scope", reason, wanted, scheme=challenged)
        return access

    async def _refuse(self, send: Send, refusal: AuthRefusal) -> None:
        body: dict[str, str] = {"error_description": refusal.description}
        if refusal.error:
            body = {"error": refusal.error, **body}
        headers = [*JSON_HEADERS, *self._challenges(refusal)]
        await respond(send, refusal.status, orjson.dumps(body), headers)

    def _challenges(self, refusal: AuthRefusal) -> list[tuple[bytes, bytes]]:
        """Bearer (unless DPoP is required) and DPoP (while it is on) challenges, the error on the one
        it belongs to (RFC 9449 §7.1), and a fresh DPoP-Nonce when nonces are in use."""
        values: list[str] = []
        dpop = self.dpop
        on_dpop = dpop is not None and (refusal.scheme == "DPoP" or dpop.required)
        if dpop is None or not dpop.required:
            error = None if on_dpop else refusal.error
            realm = self.resource if self.metadata_url is None else None
            values.append(challenge(self.metadata_url, refusal.scope, error, refusal.description, realm))
        extra: list[tuple[bytes, bytes]] = []
        if dpop is not None:
            error = refusal.error if on_dpop else None
            algs = dpop.algorithms
            values.append(dpop_challenge(algs, self.metadata_url, refusal.scope, error, refusal.description))
            nonce = dpop.nonce()
            if nonce is not None:
                extra.append((b"dpop-nonce", nonce.encode("ascii")))
        return [*((b"www-authenticate", v.encode("latin-1")) for v in values), *extra]

    async def _serve_metadata(self, method: str, send: Send) -> None:
        if self._metadata is None:  # no authorization server to name
            await respond(send, 404, b"", [])
            return
        cors = [(b"access-control-allow-origin", b"*")]
        if method in ("GET", "HEAD"):
            body = self._metadata if method == "GET" else b""
            await respond(send, 200, body, [*JSON_HEADERS, *cors])
        elif method == "OPTIONS":
            allow = [(b"access-control-allow-methods", _METADATA_METHODS.encode())]
            await respond(send, 204, b"", [*cors, *allow])
        else:
            await respond(send, 405, b"", [(b"allow", _METADATA_METHODS.encode())])


async def _unavailable(send: Send, description: str, retry_after: float) -> None:
    """503: the request may be fine, but this server cannot check it now (RFC 9110 §15.6.4)."""
    body = {"error": "temporarily_unavailable", "error_description": description}
    wait = str(max(1, math.ceil(retry_after))).encode("ascii")
    await respond(send, 503, orjson.dumps(body), [*JSON_HEADERS, (b"retry-after", wait)])


# The documented spelling, `protect(app, verifier=..., resource=..., authorization_servers=[...])`.
protect = ProtectedResource
