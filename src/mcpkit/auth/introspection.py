"""Opaque access tokens checked by asking the authorization server (Token Introspection, RFC 7662)."""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from itertools import islice

import httpx

from ..protocol.resource_auth import AccessToken, InvalidToken, check_times, same_resource, token_from_claims
from .verifier import VerifierUnavailable, fetch_json

__all__ = ["IntrospectionVerifier"]

log = logging.getLogger(__name__)

_AUTH_METHODS = ("client_secret_basic", "client_secret_post")


class IntrospectionVerifier:
    """Verifies tokens at `endpoint`, authenticating as `client_id`/`client_secret` (RFC 7662 §2.1).

    A token passes when the answer says `"active": true`, its `aud` names `audience` (this server's
    resource URL), its `iss` is `issuer` (when given) and `exp`/`nbf` hold within `leeway` seconds.
    Answers are cached by the token's SHA-256 for `cache_ttl` seconds (never past the token's `exp`; 0
    turns caching off), at most `max_cache_entries` of them, least recently used evicted first. A revoked
    token is therefore still accepted for up to `cache_ttl` seconds after revocation.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        audience: str,
        issuer: str | None = None,
        auth_method: str = "client_secret_basic",
        cache_ttl: float = 60.0,
        max_cache_entries: int = 10_000,
        leeway: float = 60.0,
        max_response_bytes: int = 64 * 1024,
        timeout: float = 10.0,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if auth_method not in _AUTH_METHODS:
            raise ValueError(f"auth_method must be one of {_AUTH_METHODS}")
        if max_cache_entries < 0 or cache_ttl < 0:
            raise ValueError("cache_ttl and max_cache_entries cannot be negative")
        self.endpoint = endpoint
        self.audience = audience
        self.issuer = issuer
        self._credentials = (client_id, client_secret)
        self.auth_method = auth_method
        self.cache_ttl, self.max_cache_entries = cache_ttl, max_cache_entries
        self.leeway = leeway
        self.max_response_bytes = max_response_bytes
        self.requests = 0  # how many introspection requests were made
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=timeout)
        self._clock = clock
        # sha256(token) -> (valid until, the AccessToken or the reason it was refused)
        self._cache: OrderedDict[bytes, tuple[float, AccessToken | str]] = OrderedDict()

    @property
    def cached(self) -> int:
        """How many answers are cached now."""
        return len(self._cache)

    async def verify(self, token: str) -> AccessToken:
        """The token's AccessToken; InvalidToken when inactive or not for this resource (cached)."""
        digest = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        hit = self._cache.get(digest)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(digest)
            outcome = hit[1]
        else:
            outcome = await self._introspect(token, now)
            self._remember(digest, outcome, now)
        if isinstance(outcome, str):
            raise InvalidToken(outcome)
        check_times(outcome.claims, self._clock(), self.leeway)
        return outcome

    async def _introspect(self, token: str, now: float) -> AccessToken | str:
        client_id, secret = self._credentials
        form = {"token": token, "token_type_hint": "access_token"}
        auth: httpx.BasicAuth | None = None
        if self.auth_method == "client_secret_basic":
            auth = httpx.BasicAuth(client_id, secret)
        else:
            form |= {"client_id": client_id, "client_secret": secret}
        self.requests += 1
        status, answer = await fetch_json(
            self._client, "POST", self.endpoint, self.max_response_bytes, data=form, auth=auth
        )
        if status != 200 or answer is None:
            log.warning("token introspection at %s answered %s", self.endpoint, status)
            raise VerifierUnavailable(f"the introspection endpoint answered {status}")
        if answer.get("active") is not True:
            return "the token is not active"
        try:
            check_times(answer, now, self.leeway)
            access = token_from_claims(answer)
        except InvalidToken as exc:
            return exc.description
        if self.issuer is not None and answer.get("iss") != self.issuer:
            return "the token was issued by another authorization server"
        if not any(same_resource(aud, self.audience) for aud in access.audience):
            return "the token was issued for another resource"
        return access

    def _remember(self, digest: bytes, outcome: AccessToken | str, now: float) -> None:
        until = now + self.cache_ttl
        if isinstance(outcome, AccessToken) and outcome.expires_at is not None:
            until = min(until, outcome.expires_at)
        if until <= now or self.max_cache_entries == 0:
            return
        self._cache[digest] = (until, outcome)
        self._cache.move_to_end(digest)
        while len(self._cache) > self.max_cache_entries:
            self._cache.popitem(last=False)
        self._evict_expired(now)

    def _evict_expired(self, now: float) -> None:
        # Only the oldest few are looked at, so a call stays cheap however full the cache is.
        for digest in list(islice(self._cache, 8)):
            if self._cache[digest][0] <= now:
                del self._cache[digest]

    async def aclose(self) -> None:
        """Close the HTTP client, if this verifier made it."""
        if self._owns_client:
            await self._client.aclose()
