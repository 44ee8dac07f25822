"""The tokens the login proxy issues: opaque, stored under their digests, bound to the resource (audience)
and to who the provider said the user is (subject); refresh tokens rotate on every use, and a rotated one
presented again revokes its whole grant (OAuth 2.1 §4.3.1, Security BCP §4.14.2)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...protocol.oauth_clients import ClientInfo
from ...protocol.oauth_server import OAuthError, narrowed_scopes, pkce_matches
from ...protocol.resource_auth import AccessToken, InvalidToken
from .records import Grant, IssuedCode, IssuedToken, Login, dump, load
from .sealing import Keys, digest, new_secret
from .store import IdentityStore
from .upstream import UpstreamTokens

__all__ = ["ProxyToken", "TokenService"]


@dataclass(frozen=True)
class ProxyToken(AccessToken):
    """An access token the login proxy issued, as `ctx.auth` shows it: the subject is the user's at the
    provider, and `upstream` holds the provider's tokens for calling its API on the user's behalf."""

    upstream: UpstreamTokens | None = field(default=None, repr=False)
    grant_id: str = ""


class TokenService:
    """Codes, grants, access and refresh tokens over an IdentityStore, for `resource`, as `issuer`."""

    def __init__(
        self,
        store: IdentityStore,
        keys: Keys,
        *,
        issuer: str,
        access_ttl: float = 3600,
        refresh_ttl: float = 30 * 86400,
        code_ttl: float = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.keys = keys
        self.issuer = issuer
        self.access_ttl = access_ttl
        self.refresh_ttl = refresh_ttl
        self.code_ttl = code_ttl
        self._clock = clock

    async def grant(self, login: Login, subject: str, upstream: UpstreamTokens) -> str:
        """Record the user's grant to `login`'s client and return the authorization code for it."""
        grant_id = new_secret()
        sealed = self.keys.seal(orjson.dumps(upstream.to_json()), grant_id)
        grant = Grant(login.client_id, subject, login.scope, login.resource, sealed)
        await self.store.put(f"grant:{grant_id}", dump(grant), self.refresh_ttl)
        code = new_secret()
        issued = IssuedCode(grant_id, login.client_id, login.redirect_uri, login.code_challenge)
        await self.store.put(f"code:{digest(code)}", dump(issued), self.code_ttl)
        return code

    async def reseal(self, grant_id: str, upstream: UpstreamTokens) -> None:
        """Replace the provider's tokens kept for a grant (after they were renewed)."""
        grant = await self._grant(grant_id)
        sealed = self.keys.seal(orjson.dumps(upstream.to_json()), grant_id)
        renewed = dataclasses.replace(grant, upstream=sealed)
        await self.store.put(f"grant:{grant_id}", dump(renewed), self.refresh_ttl)

    async def redeem_code(self, params: Mapping[str, str], client: ClientInfo) -> dict[str, Any]:
        """The token response for an authorization code (OAuth 2.1 §4.1.3): single use, by the client it
        was issued to, with the same redirect URI and the PKCE verifier of its challenge."""
        code = params.get("code")
        if not code:
            raise OAuthError("invalid_request", "code is required")
        issued = load(IssuedCode, await self.store.take(f"code:{digest(code)}"))
        if issued is None:
            raise OAuthError("invalid_grant", "the code is unknown, expired or used")
        if issued.client_id != client.client_id:
            raise OAuthError("invalid_grant", "the code was issued to another client")
        if params.get("redirect_uri", issued.redirect_uri) != issued.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri is not the one the code was sent to")
        if not pkce_matches(params.get("code_verifier"), issued.code_challenge):
            raise OAuthError("invalid_grant", "the code_verifier does not match the code_challenge")
        grant = await self._grant(issued.grant_id)
        return await self._issue(issued.grant_id, grant, client, grant.scope)

    async def refresh(self, params: Mapping[str, str], client: ClientInfo) -> dict[str, Any]:
        """The token response for a refresh token (OAuth 2.1 §4.3), which is spent and replaced."""
        token = params.get("refresh_token")
        if not token:
            raise OAuthError("invalid_request", "refresh_token is required")
        key = digest(token)
        issued = load(IssuedToken, await self.store.take(f"refresh:{key}"))
        if issued is None:
            reused = await self.store.get(f"refresh-spent:{key}")
            if reused is not None:  # a rotated token came back: someone holds a copy, end the grant
                await self.store.delete(f"grant:{reused.decode()}")
            raise OAuthError("invalid_grant", "the refresh token is unknown, expired or already used")
        await self.store.put(f"refresh-spent:{key}", issued.grant_id.encode(), self.refresh_ttl)
        if issued.client_id != client.client_id:
            await self.store.delete(f"grant:{issued.grant_id}")
            raise OAuthError("invalid_grant", "the refresh token was issued to another client")
        grant = await self._grant(issued.grant_id)
        scope = " ".join(narrowed_scopes(params.get("scope"), grant.scope.split()))
        return await self._issue(issued.grant_id, grant, client, scope)

    async def revoke(self, token: str, client: ClientInfo) -> None:
        """Revoke `token` (RFC 7009 §2.1): an access token alone, a refresh token with its whole grant.
        A token of another client, or no token at all, is ignored (the answer is 200 either way)."""
        key = digest(token)
        for kind in ("refresh", "access"):
            issued = load(IssuedToken, await self.store.get(f"{kind}:{key}"))
            if issued is None or issued.client_id != client.client_id:
                continue
            await self.store.delete(f"{kind}:{key}")
            if kind == "refresh":
                await self.store.delete(f"grant:{issued.grant_id}")

    async def verify(self, token: str) -> AccessToken:
        """The ProxyToken `token` is, while it and its grant live (the TokenVerifier protocol)."""
        issued = load(IssuedToken, await self.store.get(f"access:{digest(token)}"))
        if issued is None or issued.expires_at <= self._clock():
            raise InvalidToken("the token is unknown, expired or revoked")
        grant = load(Grant, await self.store.get(f"grant:{issued.grant_id}"))
        if grant is None or grant.client_id != issued.client_id:
            raise InvalidToken("the token's grant was revoked")
        opened = self.keys.open(grant.upstream, issued.grant_id)
        upstream = UpstreamTokens.from_json(orjson.loads(opened)) if opened is not None else None
        claims = {
            "iss": self.issuer,
            "sub": grant.subject,
            "client_id": issued.client_id,
            "aud": grant.resource,
            "scope": issued.scope,
            "exp": int(issued.expires_at),
        }
        return ProxyToken(
            subject=grant.subject,
            client_id=issued.client_id,
            scopes=frozenset(issued.scope.split()),
            expires_at=issued.expires_at,
            audience=(grant.resource,),
            claims=claims,
            upstream=upstream,
            grant_id=issued.grant_id,
        )

    async def _grant(self, grant_id: str) -> Grant:
        grant = load(Grant, await self.store.get(f"grant:{grant_id}"))
        if grant is None:
            raise OAuthError("invalid_grant", "the grant was revoked")
        return grant

    async def _issue(self, grant_id: str, grant: Grant, client: ClientInfo, scope: str) -> dict[str, Any]:
        now = self._clock()
        access = new_secret()
        record = IssuedToken(grant_id, client.client_id, scope, now + self.access_ttl)
        await self.store.put(f"access:{digest(access)}", dump(record), self.access_ttl)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.access_ttl),
            "scope": scope,
        }
        if "refresh_token" in client.grant_types:
            refresh = new_secret()
            record = IssuedToken(grant_id, client.client_id, scope, now + self.refresh_ttl)
            await self.store.put(f"refresh:{digest(refresh)}", dump(record), self.refresh_ttl)
            await self.store.put(f"grant:{grant_id}", dump(grant), self.refresh_ttl)  # lives as long
            answer["refresh_token"] = refresh
        return answer
