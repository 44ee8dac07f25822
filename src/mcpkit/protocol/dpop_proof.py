"""DPoP (RFC 9449) at a resource server: the rules a proof and a DPoP-bound token must meet. No I/O.

A request presents a bound token as `Authorization: DPoP <token>` with one `DPoP: <proof JWT>` header
(§7.1). The proof's header must say `typ: dpop+jwt`, an accepted asymmetric `alg` and a public `jwk`; its
claims must name this request (`htm`, `htu` without query or fragment), be fresh (`iat`), unique (`jti`),
carry `ath` = the token's hash and, when the server hands out nonces, a current `nonce` (§4.3, §9). The key
must be the one the token is bound to (`cnf.jkt`, an RFC 7638 thumbprint, §6). A bound token presented as
Bearer is refused (§7.2). The signature itself is checked above this layer, with a JOSE library.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import hmac
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from .resource_auth import AuthRefusal, www_authenticate

__all__ = [
    "DEFAULT_ALGORITHMS",
    "KEY_TYPES",
    "ProofClaims",
    "ReplayCache",
    "ReplayCheckUnavailable",
    "access_token_hash",
    "bound_thumbprint",
    "check_claims",
    "check_header",
    "dpop_challenge",
    "make_nonce",
    "nonce_is_current",
    "normalize_uri",
    "proof_header",
    "thumbprint",
]

# The key type and curves each accepted algorithm verifies with (RFC 7518 §3.1, RFC 8037 §3.1).
KEY_TYPES: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    **{f"{p}{n}": ("RSA", ()) for p in ("RS", "PS") for n in (256, 384, 512)},
    "ES256": ("EC", ("P-256",)),
    "ES384": ("EC", ("P-384",)),
    "ES512": ("EC", ("P-521",)),
    "EdDSA": ("OKP", ("Ed25519", "Ed448")),
}
DEFAULT_ALGORITHMS: Final = ("ES256", "ES384", "PS256", "RS256", "EdDSA")
# The members of a JWK's thumbprint, by key type (RFC 7638 §3.2); anything private is refused.
_THUMBPRINT_MEMBERS: Final = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}
_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_MAX_JTI: Final = 256
# RFC 9449 §8.1: nonce = 1*NQCHAR
_NONCE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


def _refuse(description: str, error: str = "invalid_dpop_proof") -> AuthRefusal:
    return AuthRefusal(401, error, description, scheme="DPoP")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def proof_header(values: Iterable[str], max_length: int) -> str | None:
    """The one DPoP header's value (§4.3 check 1: not more than one); None when there is none."""
    found = list(values)
    if len(found) > 1:
        raise _refuse("more than one DPoP header")
    if not found:
        return None
    proof = found[0].strip()
    if len(proof) > max_length:
        raise _refuse(f"the DPoP proof is longer than {max_length} characters")
    return proof


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """The JWK SHA-256 thumbprint (RFC 7638 §3): the required members, sorted, no whitespace."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or not all(isinstance(jwk.get(m), str) for m in members):
        raise _refuse("the proof's jwk lacks the members of its key type")
    canonical = json.dumps({m: jwk[m] for m in members}, sort_keys=True, separators=(",", ":"))
    return _b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def check_header(header: Mapping[str, Any], algorithms: Iterable[str]) -> tuple[str, Mapping[str, Any]]:
    """The proof's `alg` and public `jwk`, once its JOSE header passes §4.3 checks 4 to 7."""
    typ, alg, jwk = header.get("typ"), header.get("alg"), header.get("jwk")
    if not isinstance(typ, str) or typ.lower() != "dpop+jwt":
        raise _refuse("the proof's typ is not dpop+jwt")
    if not isinstance(alg, str) or alg not in KEY_TYPES or alg not in set(algorithms):
        raise _refuse(f"the proof's algorithm {alg!r} is not accepted")
    if not isinstance(jwk, dict):
        raise _refuse("the proof carries no jwk")
    if _PRIVATE_MEMBERS & jwk.keys():
        raise _refuse("the proof's jwk contains a private key")
    kty, curves = KEY_TYPES[alg]
    if jwk.get("kty") != kty or (curves and jwk.get("crv") not in curves):
        raise _refuse(f"the proof's jwk is not a key for {alg}")
    return alg, jwk


def normalize_uri(uri: str) -> str:
    """A URI as `htu` compares (§4.3 check 9): scheme and host in lower case, no default port, no query
    or fragment, an empty path as "/"."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path or '/'}"


def access_token_hash(access_token: str) -> str:
    """The `ath` claim: base64url of the SHA-256 of the token's ASCII (§4.2)."""
    return _b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())


@dataclass(frozen=True)
class ProofClaims:
    """What a proof must say about the request it came with."""

    method: str
    uris: tuple[str, ...]  # the request's URI as this server may be named, normalized
    access_token: str
    now: float
    max_age: float  # how old iat may be
    leeway: float  # how far ahead iat may be (clock skew)


def check_claims(claims: Mapping[str, Any], expect: ProofClaims) -> tuple[str, float]:
    """The proof's `jti` and `iat` once its claims pass §4.3 checks 8 to 11 and §7.1's `ath`."""
    jti, htm, htu, iat = claims.get("jti"), claims.get("htm"), claims.get("htu"), claims.get("iat")
    if not isinstance(jti, str) or not 0 < len(jti) <= _MAX_JTI:
        raise _refuse("the proof's jti is missing or too long")
    if htm != expect.method:
        raise _refuse("the proof was made for another HTTP method")
    if not isinstance(htu, str) or normalize_uri(htu) not in expect.uris:
        raise _refuse("the proof was made for another URL")
    if isinstance(iat, bool) or not isinstance(iat, int | float):
        raise _refuse("the proof's iat is not a number")
    if iat < expect.now - expect.max_age - expect.leeway or iat > expect.now + expect.leeway:
        raise _refuse("the proof's iat is outside the accepted window")
    ath = claims.get("ath")
    if not isinstance(ath, str) or not hmac.compare_digest(ath, access_token_hash(expect.access_token)):
        raise _refuse("the proof's ath is not the hash of the access token")
    return jti, float(iat)


def bound_thumbprint(claims: Mapping[str, Any]) -> str | None:
    """The `cnf.jkt` a token is bound to (§6.1 for JWTs, §6.2 for introspection); None when unbound."""
    cnf = claims.get("cnf")
    if not isinstance(cnf, dict) or "jkt" not in cnf:
        return None
    jkt = cnf["jkt"]
    if not isinstance(jkt, str) or not jkt:
        raise AuthRefusal(401, "invalid_token", "the token's cnf.jkt is not a string")
    return jkt


def make_nonce(secret: bytes, epoch: int) -> str:
    """A server nonce (§9) for the time slot `epoch`: the slot and its MAC, so nothing need be stored."""
    mac = hmac.new(secret, str(epoch).encode("ascii"), hashlib.sha256).digest()[:16]
    return f"{epoch}.{_b64url(mac)}"


def nonce_is_current(secret: bytes, nonce: object, epoch: int) -> bool:
    """Whether `nonce` was made for slot `epoch` or the one before (so a nonce lives one to two slots)."""
    if not isinstance(nonce, str) or len(nonce) > 64 or not _NONCE.fullmatch(nonce):
        return False
    slot, _, _ = nonce.partition(".")
    if not slot.isdigit() or int(slot) not in (epoch, epoch - 1):
        return False
    return hmac.compare_digest(nonce, make_nonce(secret, int(slot)))


def dpop_challenge(
    algorithms: Iterable[str],
    resource_metadata: str | None = None,
    scope: Iterable[str] = (),
    error: str | None = None,
    description: str = "",
) -> str:
    """The `DPoP` WWW-Authenticate value (§7.1): `algs`, and the error when there is one."""
    params: list[tuple[str, str]] = []
    if resource_metadata:
        params.append(("resource_metadata", resource_metadata))
    scopes = " ".join(scope)
    if scopes:
        params.append(("scope", scopes))
    if error:
        params.append(("error", error))
        if description:
            params.append(("error_description", description))
    params.append(("algs", " ".join(algorithms)))
    return www_authenticate("DPoP", params)


class ReplayCheckUnavailable(Exception):
    """Whether a proof was used before cannot be told now: the replay store is full or out of reach.

    Not the proof's fault, so not `invalid_dpop_proof` (a client would only retry with a new proof at
    once): the server answers 503 with Retry-After, `retry_after` seconds (RFC 9110 §15.6.4).
    """

    def __init__(self, description: str, retry_after: float) -> None:
        super().__init__(description)
        self.description = description
        self.retry_after = retry_after


class ReplayCache:
    """The `jti`s of accepted proofs, each kept while its proof could still pass (§11.1), by key.

    At most `max_entries`. An entry leaves only when its proof has expired, never to make room: a full
    cache refuses the next proof (ReplayCheckUnavailable), since forgetting a live entry would let its
    proof be replayed, and whoever fills the cache could choose whose proofs to forget.
    """

    def __init__(self, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._seen: set[tuple[str, str]] = set()
        self._expiry: list[tuple[float, str, str]] = []  # a heap: the entry that expires first on top

    def __len__(self) -> int:
        return len(self._seen)

    def add(self, key: str, jti: str, until: float, now: float) -> bool:
        """Remember (`key`, `jti`) until `until`; False when it is remembered already (a replay)."""
        self._expire(now)
        entry = (key, jti)
        if entry in self._seen:
            return False
        if len(self._seen) >= self.max_entries:
            raise ReplayCheckUnavailable("the DPoP replay cache is full", self._expiry[0][0] - now)
        self._seen.add(entry)
        heapq.heappush(self._expiry, (until, key, jti))
        return True

    def _expire(self, now: float) -> None:
        # A proof passes while now <= until (its iat is in the window until then), so its entry lives as long.
        while self._expiry and self._expiry[0][0] < now:
            _, key, jti = heapq.heappop(self._expiry)
            self._seen.discard((key, jti))
