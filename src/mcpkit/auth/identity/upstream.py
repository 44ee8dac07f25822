"""The identity provider behind the login proxy: any OAuth 2.0 or OpenID Connect provider, reached with the
proxy's own registered client (its id, secret and endpoints, or the provider's issuer discovery)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import jwt

from ...protocol.oauth_server import pkce_challenge, with_query
from ..discovery import server_metadata
from ..verifier import VerifierUnavailable, fetch_json

__all__ = ["Upstream", "UpstreamError", "UpstreamTokens"]

_MAX_BYTES = 256 * 1024


class UpstreamError(Exception):
    """The provider refused or could not be reached; the user's login ends with access_denied."""


@dataclass(frozen=True)
class UpstreamTokens:
    """What the provider issued for the user, kept sealed server-side for handlers that call its API
    on the user's behalf (`ctx.auth.upstream`), and who it says the user is."""

    access_token: str = field(repr=False)  # credentials stay out of logs
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None
    id_token: str | None = field(default=None, repr=False)
    identity: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scope": self.scope,
            "id_token": self.id_token,
            "identity": dict(self.identity),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UpstreamTokens:
        return cls(**data)


@dataclass(frozen=True)
class Upstream:
    """An identity provider and the client the proxy registered with it.

    The user is identified by `userinfo_endpoint` (its `subject_claim`: "sub" for OpenID Connect, "id"
    for GitHub) or, without one, by the ID token the token endpoint returned (OpenID Connect Core
    §3.1.3.7: received directly over TLS from the token endpoint, its issuer and audience are checked).
    `authorization_params` go with every authorization request, never over the proxy's own ones.
    """

    client_id: str
    client_secret: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str | None = None
    scopes: tuple[str, ...] = ()
    name: str = "the identity provider"
    issuer: str | None = None
    subject_claim: str = "sub"
    auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    # Sent on with every authorization request: Google's access_type=offline, Auth0's audience, ...
    authorization_params: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    async def discover(
        cls,
        issuer: str,
        client_id: str,
        client_secret: str,
        *,
        scopes: tuple[str, ...] = ("openid",),
        name: str | None = None,
        authorization_params: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> Upstream:
        """The provider at `issuer`, its endpoints read from its metadata (RFC 8414, OIDC Discovery)."""
        async with _client(http_client) as http:
            metadata = await server_metadata(http, issuer, _MAX_BYTES)
        methods = metadata.get("token_endpoint_auth_methods_supported", ["client_secret_basic"])
        return cls(
            client_id=client_id,
            client_secret=client_secret,
            authorization_endpoint=metadata["authorization_endpoint"],
            token_endpoint=metadata["token_endpoint"],
            userinfo_endpoint=metadata.get("userinfo_endpoint"),
            scopes=scopes,
            name=name or issuer,
            issuer=issuer,
            auth_method="client_secret_basic" if "client_secret_basic" in methods else "client_secret_post",
            authorization_params=dict(authorization_params or {}),
        )

    def authorization_url(self, redirect_uri: str, state: str, verifier: str, nonce: str) -> str:
        """Where the user's browser goes to log in at the provider."""
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": pkce_challenge(verifier),
            "code_challenge_method": "S256",
            "scope": " ".join(self.scopes) or None,
            "nonce": nonce if "openid" in self.scopes else None,
        }
        return with_query(self.authorization_endpoint, {**self.authorization_params, **params})

    async def redeem(
        self, code: str, redirect_uri: str, verifier: str, nonce: str, http: httpx.AsyncClient
    ) -> tuple[str, UpstreamTokens]:
        """The user's subject at the provider and the provider's tokens, for the code it sent back."""
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        tokens = _tokens(await self._post_token({**form, "code_verifier": verifier}, http))
        identity = await self._identity(tokens, nonce, http)
        subject = identity.get(self.subject_claim)
        if subject is None or subject == "":
            raise UpstreamError(f"the provider did not say who the user is ({self.subject_claim!r})")
        return str(subject), UpstreamTokens(**{**tokens.to_json(), "identity": identity})

    async def renew(self, tokens: UpstreamTokens, http: httpx.AsyncClient) -> UpstreamTokens:
        """Fresh tokens for the same user, from its refresh token (kept when the provider does not
        rotate it); UpstreamError when there is none or the provider refuses."""
        if tokens.refresh_token is None:
            raise UpstreamError("the provider issued no refresh token for this user")
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        fresh = _tokens(await self._post_token(form, http))
        return UpstreamTokens(
            access_token=fresh.access_token,
            token_type=fresh.token_type,
            refresh_token=fresh.refresh_token or tokens.refresh_token,
            expires_at=fresh.expires_at,
            scope=fresh.scope or tokens.scope,
            id_token=fresh.id_token or tokens.id_token,
            identity=tokens.identity,
        )

    async def _post_token(self, form: dict[str, str], http: httpx.AsyncClient) -> dict[str, Any]:
        auth: tuple[str, str] | None = (self.client_id, self.client_secret)
        if self.auth_method == "client_secret_post":
            form = {**form, "client_id": self.client_id, "client_secret": self.client_secret}
            auth = None
        headers = {"accept": "application/json"}  # GitHub answers form-encoded without it
        try:
            status, answer = await fetch_json(
                http, "POST", self.token_endpoint, _MAX_BYTES, data=form, auth=auth, headers=headers
            )
        except VerifierUnavailable as exc:
            raise UpstreamError(str(exc)) from exc
        if status != 200 or answer is None or "error" in answer:
            error = answer.get("error") if answer else None
            raise UpstreamError(f"the provider refused the grant ({status}, {error})")
        return answer

    async def _identity(self, tokens: UpstreamTokens, nonce: str, http: httpx.AsyncClient) -> dict[str, Any]:
        if self.userinfo_endpoint is not None:
            headers = {"authorization": f"Bearer {tokens.access_token}", "accept": "application/json"}
            try:
                status, found = await fetch_json(
                    http, "GET", self.userinfo_endpoint, _MAX_BYTES, headers=headers
                )
            except VerifierUnavailable as exc:
                raise UpstreamError(str(exc)) from exc
            if status != 200 or found is None:
                raise UpstreamError(f"the provider's userinfo answered {status}")
            return found
        if tokens.id_token is None:
            raise UpstreamError("the provider returned no ID token and no userinfo endpoint is configured")
        return self._id_token_claims(tokens.id_token, nonce)

    def _id_token_claims(self, id_token: str, nonce: str) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(id_token, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            raise UpstreamError("the provider's ID token is not a JWT") from exc
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.client_id not in audiences:
            raise UpstreamError("the ID token was issued to another client")
        if self.issuer is not None and claims.get("iss") != self.issuer:
            raise UpstreamError("the ID token is from another issuer")
        if claims.get("nonce") != nonce:
            raise UpstreamError("the ID token's nonce is not this login's")
        return claims


def _tokens(answer: dict[str, Any]) -> UpstreamTokens:
    """The tokens of a token endpoint's answer (RFC 6749 §5.1)."""
    access = answer.get("access_token")
    if not isinstance(access, str):
        raise UpstreamError("the provider's token response has no access_token")
    expires_in = answer.get("expires_in")
    return UpstreamTokens(
        access_token=access,
        token_type=str(answer.get("token_type", "Bearer")),
        refresh_token=answer.get("refresh_token"),
        expires_at=time.time() + float(expires_in) if isinstance(expires_in, int | float) else None,
        scope=answer.get("scope"),
        id_token=answer.get("id_token"),
    )


def _client(given: httpx.AsyncClient | None) -> Any:
    """`given` as an async context that leaves it open, or a fresh client closed after use."""
    if given is None:
        return httpx.AsyncClient(timeout=10.0)
    return _Borrowed(given)


class _Borrowed:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def __aenter__(self) -> httpx.AsyncClient:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        return None
