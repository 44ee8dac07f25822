"""JWT access tokens (RFC 9068) checked against the issuer's published keys, with PyJWT.

PyJWT: maintained, already mcpkit's `oauth` extra (the client signs private_key_jwt assertions with it), and
its PyJWK binds a key to one algorithm, so a token's header cannot choose how its signature is checked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import anyio
import httpx
import jwt

from ..protocol.resource_auth import AccessToken, InvalidToken, check_times, same_resource, token_from_claims
from .discovery import server_metadata
from .jwks import KEY_TYPES, JWKSCache
from .verifier import VerifierUnavailable

__all__ = ["DEFAULT_ALGORITHMS", "MAX_LEEWAY", "JWTVerifier"]

DEFAULT_ALGORITHMS: Final = ("RS256", "ES256", "PS256", "EdDSA")
MAX_LEEWAY: Final = 300.0


class JWTVerifier:
    """Verifies JWT access tokens issued by `issuer` for `audience` (this server's resource URL).

    The signature must be by a key in the issuer's JWKS (`jwks_uri`, or the one its metadata names) under
    one of `algorithms` (asymmetric only: `none` and HS* are refused at construction). `exp` (required),
    `nbf`, `iss` (required, exact) and `aud` (required, must name `audience`) are checked, allowing `leeway`
    seconds of clock skew (at most MAX_LEEWAY). `token_type`, when set (RFC 9068 §2.1 says "at+jwt"), must
    be the header's `typ`. The JWKS is kept `jwks_ttl` seconds and re-fetched for an unknown key id at
    most once per `jwks_min_refetch_interval` seconds; a failed discovery of where it is is not tried
    again sooner either (each request would otherwise fetch the metadata, queued on one lock).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_uri: str | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway: float = 60.0,
        token_type: str | None = None,
        jwks_ttl: float = 300.0,
        jwks_min_refetch_interval: float = 30.0,
        max_response_bytes: int = 256 * 1024,
        timeout: float = 10.0,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        refused = [a for a in algorithms if a not in KEY_TYPES]
        if refused or not algorithms:
            raise ValueError(f"only asymmetric signature algorithms can be accepted, not {refused}")
        if not 0 <= leeway <= MAX_LEEWAY:
            raise ValueError(f"leeway must be between 0 and {MAX_LEEWAY} seconds")
        self.issuer = issuer
        self.audience = audience
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.token_type = token_type
        self.max_response_bytes = max_response_bytes
        self.jwks_ttl, self.jwks_min_refetch_interval = jwks_ttl, jwks_min_refetch_interval
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=timeout)
        self._clock = clock
        self._jwks: JWKSCache | None = None
        self._discovering = anyio.Lock()
        self._discovery_failed: tuple[float, VerifierUnavailable] | None = None

    @property
    def jwks(self) -> JWKSCache | None:
        """The key cache, once the JWKS location is known."""
        return self._jwks

    async def verify(self, token: str) -> AccessToken:
        """The token's AccessToken; InvalidToken for any failed check (VerifierUnavailable: no keys)."""
        alg, kid = self._header(token)
        key = await (await self._key_set()).key(kid, alg)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                issuer=self.issuer,
                options={
                    "require": ["exp", "iss", "aud"],
                    "verify_aud": False,  # compared below as resource URIs (RFC 8707)
                    "verify_exp": False,  # checked below against the verifier's clock
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"the token was refused: {exc}") from exc
        check_times(claims, self._clock(), self.leeway)
        access = token_from_claims(claims)
        if not any(same_resource(aud, self.audience) for aud in access.audience):
            raise InvalidToken("the token was issued for another resource")
        return access

    def _header(self, token: str) -> tuple[str, str | None]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken("the token is not a well-formed JWT") from exc
        alg, kid, typ = header.get("alg"), header.get("kid"), header.get("typ")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken(f"the signature algorithm {alg!r} is not accepted")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the kid header is not a string")
        if self.token_type is not None:
            wanted = {self.token_type.lower(), "application/" + self.token_type.lower()}
            if not isinstance(typ, str) or typ.lower() not in wanted:
                raise InvalidToken(f"the token type {typ!r} is not {self.token_type!r}")
        return alg, kid

    async def _key_set(self) -> JWKSCache:
        if self._jwks is None:
            self._raise_recent_failure()
            async with self._discovering:
                if self._jwks is None:
                    self._raise_recent_failure()  # found while this request waited on the lock
                    uri = self.jwks_uri or await self._discover()
                    self._jwks = JWKSCache(
                        uri,
                        self._client,
                        ttl=self.jwks_ttl,
                        min_refetch_interval=self.jwks_min_refetch_interval,
                        max_bytes=self.max_response_bytes,
                        clock=self._clock,
                    )
        return self._jwks

    def _raise_recent_failure(self) -> None:
        failed = self._discovery_failed
        if failed is not None and self._clock() - failed[0] < self.jwks_min_refetch_interval:
            raise VerifierUnavailable(str(failed[1]))

    async def _discover(self) -> str:
        try:
            metadata = await server_metadata(self._client, self.issuer, self.max_response_bytes)
            uri = metadata.get("jwks_uri")
            if not isinstance(uri, str):
                raise VerifierUnavailable(f"the metadata of {self.issuer} names no jwks_uri")
        except VerifierUnavailable as exc:
            self._discovery_failed = (self._clock(), exc)
            raise
        self._discovery_failed = None
        return uri

    async def aclose(self) -> None:
        """Close the HTTP client, if this verifier made it."""
        if self._owns_client:
            await self._client.aclose()
