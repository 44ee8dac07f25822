"""DPoP proofs (RFC 9449) checked for a protected MCP server: the signature with PyJWT, the rest by the
pure rules of protocol/dpop_proof.py, replays by a ReplayStore, nonces without stored state."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..protocol.dpop_proof import (
    DEFAULT_ALGORITHMS,
    KEY_TYPES,
    ProofClaims,
    check_claims,
    check_header,
    make_nonce,
    nonce_is_current,
    normalize_uri,
    proof_header,
    thumbprint,
)
from ..protocol.resource_auth import AuthRefusal
from .replay import InMemoryReplayStore, ReplayStore

__all__ = ["DPoPChecker", "DPoPOption", "Proof", "dpop_checker"]

DPoPOption = Literal["allowed", "required", "disabled"] | bool | None


@dataclass(frozen=True)
class Proof:
    """A proof that passed every check of its own; whether its key fits the token is checked next."""

    jkt: str  # the RFC 7638 thumbprint of the proof's key
    jti: str
    until: float  # when the proof is too old to be accepted anyway


class DPoPChecker:
    """Checks the DPoP proofs of one protected resource (`protect(..., dpop=DPoPChecker(...))`).

    required: only DPoP-bound tokens are accepted (a Bearer token is refused); otherwise both, but a token
    bound to a key (`cnf.jkt`) always needs a proof by that key. algorithms: the proof signatures accepted
    (asymmetric only), also announced in the challenge's `algs`. A proof's `iat` may be `max_age` seconds
    old and `leeway` seconds ahead. replays: where the `jti`s of accepted proofs are kept until they are
    too old to pass; by default in this process, at most `max_replay_entries` of them. Several workers
    behind one URL share one store (`RedisBackplane.replay_store()`), else a proof one of them accepted
    passes again at another. A full or unreachable store is a 503 (ReplayCheckUnavailable), never a
    forgotten entry. Proofs longer than `max_proof_length` characters are refused unread. use_nonce:
    proofs must carry a nonce this server handed out in a `DPoP-Nonce` header (§9); a nonce lives
    `nonce_lifetime` to twice that many seconds, and is a MAC of its time slot under `nonce_secret`
    (random per process unless given: give the same one to every worker behind one URL).
    """

    def __init__(
        self,
        *,
        required: bool = False,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        max_age: float = 60.0,
        leeway: float = 5.0,
        replays: ReplayStore | None = None,
        max_replay_entries: int | None = None,
        max_proof_length: int = 8192,
        use_nonce: bool = False,
        nonce_lifetime: float = 300.0,
        nonce_secret: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if replays is not None and max_replay_entries is not None:
            raise ValueError("max_replay_entries bounds the default store: give it to the store you pass")
        refused = [a for a in algorithms if a not in KEY_TYPES]
        if refused or not algorithms:
            raise ValueError(f"only asymmetric signature algorithms can be accepted, not {refused}")
        if max_age <= 0 or leeway < 0 or nonce_lifetime <= 0:
            raise ValueError("max_age and nonce_lifetime must be positive, leeway not negative")
        self.required = required
        self.algorithms = tuple(algorithms)
        self.max_age, self.leeway = max_age, leeway
        self.max_proof_length = max_proof_length
        self.use_nonce, self.nonce_lifetime = use_nonce, nonce_lifetime
        if replays is None:
            replays = InMemoryReplayStore(100_000 if max_replay_entries is None else max_replay_entries)
        self.replays = replays
        self._secret = nonce_secret or secrets.token_bytes(32)
        self._clock = clock

    def nonce(self) -> str | None:
        """The nonce to hand out now (None when nonces are off)."""
        if not self.use_nonce:
            return None
        return make_nonce(self._secret, int(self._clock() // self.nonce_lifetime))

    def read(self, scope: Any, access_token: str, resource: str) -> Proof:
        """The request's proof, checked against the request and `access_token` (RFC 9449 §4.3, §7.1)."""
        headers = scope["headers"]
        proof = proof_header(
            [v.decode("latin-1") for k, v in headers if k.lower() == b"dpop"], self.max_proof_length
        )
        if proof is None:
            raise _refuse("DPoP credentials need a DPoP proof header")
        claims, jwk = self._verified(proof)
        now = self._clock()
        expect = ProofClaims(
            scope["method"], request_uris(scope, resource), access_token, now, self.max_age, self.leeway
        )
        jti, iat = check_claims(claims, expect)
        if self.use_nonce and not nonce_is_current(
            self._secret, claims.get("nonce"), int(now // self.nonce_lifetime)
        ):
            raise _refuse("a fresh DPoP nonce is required", "use_dpop_nonce")
        return Proof(thumbprint(jwk), jti, iat + self.max_age + self.leeway)

    async def accept(self, proof: Proof, bound_to: str | None) -> None:
        """Accept `proof` for a token bound to `bound_to` (its cnf.jkt) once, or say why not (AuthRefusal;
        ReplayCheckUnavailable when the replay store cannot tell)."""
        if bound_to is None:
            raise _refuse("the token is not DPoP-bound", "invalid_token")
        if not hmac.compare_digest(proof.jkt, bound_to):
            raise _refuse("the proof's key is not the key the token is bound to", "invalid_token")
        if not await self.replays.first_use(proof.jkt, proof.jti, proof.until, self._clock()):
            raise _refuse("the proof was used before")

    def _verified(self, proof: str) -> tuple[dict[str, Any], Any]:
        try:  # imported here: a server whose tokens are API keys runs without the oauth extra (PyJWT)
            import jwt
            from jwt import PyJWK, PyJWTError
        except ImportError:
            raise _refuse(
                "this server cannot verify DPoP proofs (mcpkit's oauth extra is not installed)"
            ) from None
        try:
            header = jwt.get_unverified_header(proof)
        except PyJWTError:
            raise _refuse("the DPoP proof is not a well-formed JWT") from None
        alg, jwk = check_header(header, self.algorithms)
        try:
            key = PyJWK(dict(jwk), algorithm=alg)
            claims: dict[str, Any] = jwt.decode(
                proof,
                key,
                algorithms=[alg],
                options={"verify_exp": False, "verify_iat": False, "verify_nbf": False, "verify_aud": False},
            )
        except (PyJWTError, ValueError, TypeError, KeyError):
            raise _refuse("the DPoP proof's signature does not verify with its jwk") from None
        return claims, jwk


def _refuse(description: str, error: str = "invalid_dpop_proof") -> AuthRefusal:
    return AuthRefusal(401, error, description, scheme="DPoP")


def request_uris(scope: Any, resource: str) -> tuple[str, ...]:
    """The request's URI as `htu` may name it: at the Host it was sent to, or at the resource URL's
    origin (so a proof made for the public URL passes behind a proxy). Query and fragment left out."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1").partition("?")[0] if isinstance(raw, bytes | bytearray) else scope["path"]
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"host"), "")
    origin = normalize_uri(resource)
    origin = origin[: origin.index("/", origin.index("//") + 2)] if origin else ""
    uris = {normalize_uri(f"{scope.get('scheme', 'http')}://{host}{path}"), normalize_uri(origin + path)}
    uris.discard("")
    return tuple(uris)


def dpop_checker(option: DPoPOption | DPoPChecker) -> DPoPChecker | None:
    """The checker `protect(dpop=...)` names: "allowed" (or True), "required", "disabled" (or False, None)."""
    if isinstance(option, DPoPChecker):
        return option
    if option in ("allowed", True):
        return DPoPChecker()
    if option == "required":
        return DPoPChecker(required=True)
    if option in ("disabled", False, None):
        return None
    raise ValueError(f'dpop must be "allowed", "required", "disabled" or a DPoPChecker, not {option!r}')
