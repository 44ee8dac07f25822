"""tests/client/oauth_peer.py's server, DPoP-aware (RFC 9449): its metadata lists ES256 for DPoP, its
token endpoint checks proofs and binds the tokens it issues to the proof's key, and /mcp accepts a bound
token only as `DPoP <token>` with a proof for that request. Either side may demand a nonce.

The checks are written here from the RFC, independently of the client's code: a proof's JWK becomes a
key through PyJWT, its thumbprint is computed by hand (RFC 7638 §3), every claim is compared.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt
from oauth_peer import JSON, AuthorizedMCP, Settings, _send


@dataclass
class DPoPSettings:
    as_nonce: bool = False  # the token endpoint wants a nonce (RFC 9449 §8)
    rs_nonce: bool = False  # /mcp wants a nonce (§9)
    rotate: bool = False  # every refusal brings a new nonce, so no proof ever carries the right one
    list_es256: bool = True  # dpop_signing_alg_values_supported: ["ES256"] in the metadata
    offer: bool = True  # /mcp's 401 challenge offers DPoP (RFC 9449 §7.1) rather than Bearer alone
    proof_required: bool = True  # the token endpoint refuses a request without a proof


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: JSON) -> str:
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    return _b64url(
        hashlib.sha256(json.dumps(members, sort_keys=True, separators=(",", ":")).encode()).digest()
    )


class DPoPMCP(AuthorizedMCP):
    def __init__(self, settings: Settings | None = None, dpop: DPoPSettings | None = None) -> None:
        super().__init__(settings)
        self.dpop = dpop or DPoPSettings()
        self.nonce = {"as": "as-" + secrets.token_urlsafe(8), "rs": "rs-" + secrets.token_urlsafe(8)}
        self.bound: dict[str, str] = {}  # access token -> jkt
        self.jtis: list[str] = []
        self.proofs: dict[str, list[JSON]] = {"token": [], "mcp": []}  # claims of every valid proof
        self.errors: list[str] = []
        self.nonce_refusals = {"as": 0, "rs": 0}
        self.refused_bodies: list[bytes] = []  # the MCP requests refused for their nonce, each time

    def server_metadata(self, body: bytes, headers: dict[str, str]) -> tuple[int, JSON, list[Any]]:
        status, metadata, extra = super().server_metadata(body, headers)
        if self.dpop.list_es256:
            metadata["dpop_signing_alg_values_supported"] = ["ES256"]
        return status, metadata, extra

    def check(self, proof: str | None, method: str, url: str, token: str | None) -> tuple[JSON, str] | str:
        """The proof's claims and key thumbprint, or why it is refused (RFC 9449 §4.3)."""
        if not proof:
            return "no DPoP proof"
        header = jwt.get_unverified_header(proof)
        jwk = header.get("jwk") or {}
        if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256" or "d" in jwk:
            return f"bad proof header {header}"
        key = jwt.PyJWK(jwk, "ES256").key
        claims = jwt.decode(proof, key, algorithms=["ES256"])
        if claims.get("htm") != method or claims.get("htu") != url:
            return f"htm/htu {claims.get('htm')} {claims.get('htu')} for {method} {url}"
        if abs(time.time() - claims.get("iat", 0)) > 60 or claims.get("jti") in self.jtis:
            return "stale iat or replayed jti"
        self.jtis.append(claims["jti"])
        ath = _b64url(hashlib.sha256(token.encode()).digest()) if token else None
        if claims.get("ath") != ath:
            return f"ath {claims.get('ath')} for token {token}"
        return claims, thumbprint(jwk)

    def wants_nonce(self, side: str, claims: JSON) -> bool:
        required = self.dpop.as_nonce if side == "as" else self.dpop.rs_nonce
        if not required or (claims.get("nonce") == self.nonce[side] and not self.dpop.rotate):
            return False
        self.nonce_refusals[side] += 1
        if self.dpop.rotate:
            self.nonce[side] = f"{side}-{secrets.token_urlsafe(8)}"
        return True

    def token(self, body: bytes, headers: dict[str, str]) -> tuple[int, JSON, list[Any]]:
        if not headers.get("dpop") and not self.dpop.proof_required:
            return super().token(body, headers)
        checked = self.check(
            headers.get("dpop"), "POST", f"{self.base}{self.settings.issuer_path}/token", None
        )
        if isinstance(checked, str):
            self.errors.append(checked)
            return 400, {"error": "invalid_dpop_proof", "error_description": checked}, []
        claims, jkt = checked
        if self.wants_nonce("as", claims):
            return 400, {"error": "use_dpop_nonce"}, [("dpop-nonce", self.nonce["as"])]
        self.proofs["token"].append(claims)
        status, reply, extra = super().token(body, headers)
        if status == 200:
            reply["token_type"] = "DPoP"
            self.bound[reply["access_token"]] = jkt
        return status, reply, extra

    async def protected(
        self, scope: JSON, body: bytes, headers: dict[str, str], receive: Any, send: Any
    ) -> None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme == "DPoP" and token in self.bound:
            checked = self.check(headers.get("dpop"), scope["method"], f"{self.base}/mcp", token)
            if isinstance(checked, str) or checked[1] != self.bound[token]:
                self.errors.append(checked if isinstance(checked, str) else "proof key is not the bound key")
                challenge = 'DPoP error="invalid_dpop_proof"'
                return await _send(send, 401, b"{}", [("www-authenticate", challenge)])
            if self.wants_nonce("rs", checked[0]):
                self.refused_bodies.append(body)
                challenge = 'DPoP error="use_dpop_nonce", error_description="nonce needed"'
                extra = [("www-authenticate", challenge), ("dpop-nonce", self.nonce["rs"])]
                return await _send(send, 401, b'{"error":"use_dpop_nonce"}', extra)
            self.proofs["mcp"].append(checked[0])
            headers = {**headers, "authorization": f"Bearer {token}"}
        elif token in self.bound:
            self.errors.append(f"a bound token presented as {scheme}")
            headers = {**headers, "authorization": ""}
        elif token not in self.tokens and self.dpop.offer:
            metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
            challenge = f'DPoP algs="ES256", resource_metadata="{metadata}", scope="read write"'
            return await _send(send, 401, b'{"error":"invalid_token"}', [("www-authenticate", challenge)])
        await super().protected(scope, body, headers, receive, send)
