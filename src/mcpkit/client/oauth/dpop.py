"""DPoP (RFC 9449): sender-constrained tokens. The client holds a key pair, proves possession of it with a
signed JWT on each token request and each request that presents a DPoP-bound access token, and answers
a server's `use_dpop_nonce` challenge by signing once more with the nonce it was given."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from .discovery import ServerMetadata
from .store import Tokens

ALGORITHM = "ES256"
NONCE_ERROR = "use_dpop_nonce"
# RFC 9449 §8.1: nonce = 1*NQCHAR, NQCHAR = %x21 / %x23-5B / %x5D-7E
_NONCE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_NONCE_CHALLENGE = re.compile(r'(?i)\bdpop\b.*\berror\s*=\s*"?use_dpop_nonce\b')


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def target_uri(url: str) -> str:
    """The `htu` claim: the request's URI without query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def access_token_hash(access_token: str) -> str:
    """The `ath` claim: base64url of the SHA-256 of the access token's ASCII (RFC 9449 §4.2)."""
    return _b64url(hashlib.sha256(access_token.encode("ascii")).digest())


class DPoP:
    """A DPoP key pair (ES256, made on first use unless given) and the nonces servers handed out.

    required: send proofs to every authorization server, whatever the resource offered; otherwise only
    for a resource whose challenge offers DPoP, to a server whose metadata lists ES256 in
    `dpop_signing_alg_values_supported`. private_key: a P-256 key from `cryptography`, for a
    client whose tokens outlive the process (a bound token is useless without its key).
    max_origins: how many servers' nonces are kept (the least recently stored go first).
    max_nonce_length: a longer nonce is ignored, so the request that carried it is not retried.
    """

    def __init__(
        self,
        *,
        required: bool = False,
        private_key: Any = None,
        max_origins: int = 32,
        max_nonce_length: int = 512,
    ) -> None:
        self.required = required
        self.max_origins = max_origins
        self.max_nonce_length = max_nonce_length
        self._key = private_key
        self._nonces: OrderedDict[str, str] = OrderedDict()

    # ---- the key -----------------------------------------------------------------------------------

    def _private_key(self) -> Any:
        if self._key is None:
            from cryptography.hazmat.primitives.asymmetric import ec  # pyjwt[crypto]: DPoP users only

            self._key = ec.generate_private_key(ec.SECP256R1())
        return self._key

    @property
    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWK (RFC 7518 §6.2.1): the `jwk` header of every proof."""
        numbers = self._private_key().public_key().public_numbers()
        return {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64url(numbers.x.to_bytes(32, "big")),
            "y": _b64url(numbers.y.to_bytes(32, "big")),
        }

    @property
    def thumbprint(self) -> str:
        """The JWK SHA-256 thumbprint (RFC 7638) a bound token names in `cnf.jkt`."""
        canonical = json.dumps(self.public_jwk, sort_keys=True, separators=(",", ":"))
        return _b64url(hashlib.sha256(canonical.encode("ascii")).digest())

    # ---- proofs and nonces --------------------------------------------------------------------------

    def used_at(self, metadata: ServerMetadata) -> bool:
        """Whether token requests to this authorization server carry a proof."""
        return self.required or metadata.supports("dpop_signing_alg_values_supported", ALGORITHM)

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof JWT for one request (RFC 9449 §4.2): new `jti`, the origin's nonce if any,
        and `ath` when the request presents `access_token`."""
        import jwt  # pyjwt[crypto]

        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": target_uri(url),
            "iat": int(time.time()),
        }
        nonce = self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        headers = {"typ": "dpop+jwt", "jwk": self.public_jwk}
        return jwt.encode(claims, self._private_key(), algorithm=ALGORITHM, headers=headers)

    def remember_nonce(self, url: str, response: httpx.Response) -> bool:
        """Keep the DPoP-Nonce a response from `url`'s server carries (RFC 9449 §8.2, §9); True when
        it is a new one, so a request refused for want of it is worth signing again."""
        nonce = response.headers.get("DPoP-Nonce")
        if nonce is None or len(nonce) > self.max_nonce_length or not _NONCE.fullmatch(nonce):
            return False
        origin = _origin(url)
        if self._nonces.get(origin) == nonce:
            return False
        self._nonces[origin] = nonce
        self._nonces.move_to_end(origin)
        while len(self._nonces) > self.max_origins:
            self._nonces.popitem(last=False)
        return True

    def nonce_for(self, url: str) -> str | None:
        return self._nonces.get(_origin(url))


def is_nonce_challenge(response: httpx.Response) -> bool:
    """A resource server refused a proof for its missing or stale nonce: 401 with a DPoP challenge
    error="use_dpop_nonce" and a DPoP-Nonce header (RFC 9449 §9). Reads headers only."""
    if response.status_code != 401 or "DPoP-Nonce" not in response.headers:
        return False
    return bool(_NONCE_CHALLENGE.search(response.headers.get("WWW-Authenticate", "")))


def is_token_nonce_challenge(response: httpx.Response) -> bool:
    """The authorization server refused a proof for its missing or stale nonce: 400
    error="use_dpop_nonce" and a DPoP-Nonce header (RFC 9449 §8). The body must have been read."""
    if response.status_code != 400 or "DPoP-Nonce" not in response.headers:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("error") == NONCE_ERROR


def is_bound(tokens: Tokens | None) -> bool:
    """Whether the token is DPoP-bound: the token response said token_type DPoP (RFC 9449 §5)."""
    return tokens is not None and tokens.token_type.lower() == "dpop"


def present(request: httpx.Request, tokens: Tokens | None, dpop: DPoP | None) -> None:
    """Put the access token on a resource request: `DPoP <token>` with a fresh proof when the token is
    DPoP-bound (RFC 9449 §7.1), else `Bearer <token>` and no proof."""
    request.headers.pop("DPoP", None)
    if tokens is None:
        return
    if dpop is not None and is_bound(tokens):
        request.headers["Authorization"] = f"DPoP {tokens.access_token}"
        request.headers["DPoP"] = dpop.proof(request.method, str(request.url), tokens.access_token)
    else:
        request.headers["Authorization"] = f"Bearer {tokens.access_token}"


# Builds a token request's form and headers afresh (a client assertion must not be replayed).
FormBuilder = Callable[[], tuple[dict[str, str], dict[str, str]]]


async def post_token_request(
    http: httpx.AsyncClient, url: str, build: FormBuilder, dpop: DPoP | None
) -> tuple[httpx.Response, dict[str, str]]:
    """POST a token request, with a proof when `dpop` is given; on a use_dpop_nonce refusal that brings
    a new nonce, once more with it (RFC 9449 §8). Returns the response and the form that was sent."""
    response, form = await _post_once(http, url, build, dpop)
    if dpop is not None and dpop.remember_nonce(url, response) and is_token_nonce_challenge(response):
        response, form = await _post_once(http, url, build, dpop)
        dpop.remember_nonce(url, response)
    return response, form


async def _post_once(
    http: httpx.AsyncClient, url: str, build: FormBuilder, dpop: DPoP | None
) -> tuple[httpx.Response, dict[str, str]]:
    form, headers = build()
    if dpop is not None:
        headers["DPoP"] = dpop.proof("POST", url)
    return await http.post(url, data=form, headers=headers), form
