"""An authorization server's signing keys (its JWKS, RFC 7517 §5), fetched once, kept, and re-fetched when
they age or a token names a key id not seen yet, at most once per `min_refetch_interval`: key rotation
works without a re-fetch per forged `kid`."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Final

import anyio
import httpx
from jwt import PyJWK, PyJWTError

from ..protocol.resource_auth import InvalidToken
from .verifier import VerifierUnavailable, fetch_json

__all__ = ["KEY_TYPES", "JWKSCache"]

log = logging.getLogger(__name__)

# The key type (and curves) each signature algorithm verifies with (RFC 7518 §3.1, RFC 8037 §3.1).
KEY_TYPES: Final = {
    **{f"{p}{n}": ("RSA", None) for p in ("RS", "PS") for n in (256, 384, 512)},
    "ES256": ("EC", "P-256"),
    "ES384": ("EC", "P-384"),
    "ES512": ("EC", "P-521"),
    "EdDSA": ("OKP", None),
}


class JWKSCache:
    """The keys at `jwks_uri`, by key id."""

    def __init__(
        self,
        jwks_uri: str,
        client: httpx.AsyncClient,
        *,
        ttl: float = 300.0,
        min_refetch_interval: float = 30.0,
        max_bytes: int = 256 * 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.jwks_uri = jwks_uri
        self.ttl = ttl
        self.min_refetch_interval = min_refetch_interval
        self.max_bytes = max_bytes
        self.fetches = 0  # how many times the JWKS was requested
        self._client = client
        self._clock = clock
        self._keys: list[dict[str, Any]] = []
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._lock = anyio.Lock()
        self._prepared: dict[tuple[str | None, str], PyJWK] = {}

    async def key(self, kid: str | None, alg: str) -> PyJWK:
        """The key that verifies `alg` signatures under `kid`; InvalidToken if the server has none."""
        if self._fetched_at is None or self._clock() - self._fetched_at > self.ttl:
            await self._refresh(stale_ok=self._fetched_at is not None)
        found = self._find(kid, alg)
        if found is None and kid is not None and self._may_refetch():
            await self._refresh(stale_ok=True)
            found = self._find(kid, alg)
        if found is None:
            raise InvalidToken("the token is signed with a key the authorization server does not publish")
        return self._prepare(found, kid, alg)

    def _may_refetch(self) -> bool:
        last = self._attempted_at
        return last is None or self._clock() - last >= self.min_refetch_interval

    def _find(self, kid: str | None, alg: str) -> dict[str, Any] | None:
        kty, crv = KEY_TYPES.get(alg, (None, None))
        usable = [
            k
            for k in self._keys
            if k.get("kty") == kty
            and (crv is None or k.get("crv") == crv)
            and k.get("use", "sig") == "sig"
            and k.get("alg", alg) == alg
        ]
        if kid is not None:
            return next((k for k in usable if k.get("kid") == kid), None)
        return usable[0] if len(usable) == 1 else None  # without a kid only an unambiguous key will do

    def _prepare(self, jwk: dict[str, Any], kid: str | None, alg: str) -> PyJWK:
        prepared = self._prepared.get((kid, alg))
        if prepared is None:
            try:
                prepared = PyJWK(jwk, algorithm=alg)
            except PyJWTError as exc:
                raise InvalidToken(f"the signing key is unusable: {exc}") from exc
            self._prepared[(kid, alg)] = prepared
        return prepared

    async def _refresh(self, stale_ok: bool) -> None:
        seen = self._attempted_at
        async with self._lock:
            if self._attempted_at != seen:
                return  # another task fetched while this one waited
            if seen is not None and not self._may_refetch():
                if stale_ok:
                    return
                raise VerifierUnavailable(f"the JWKS at {self.jwks_uri} could not be fetched recently")
            self._attempted_at = self._clock()
            try:
                self._keys = await self._fetch()
                self._fetched_at = self._clock()
                self._prepared.clear()
            except VerifierUnavailable:
                if not stale_ok:
                    raise
                log.warning("JWKS refresh from %s failed; keeping the keys fetched before", self.jwks_uri)

    async def _fetch(self) -> list[dict[str, Any]]:
        self.fetches += 1
        status, document = await fetch_json(self._client, "GET", self.jwks_uri, self.max_bytes)
        keys = document.get("keys") if document is not None else None
        if status != 200 or not isinstance(keys, list):
            raise VerifierUnavailable(f"the JWKS at {self.jwks_uri} answered {status} without a key set")
        return [k for k in keys if isinstance(k, dict)]
