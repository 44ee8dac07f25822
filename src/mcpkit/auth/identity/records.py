"""What the login proxy stores, as JSON values under digests of the credentials that reach them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

__all__ = ["Grant", "IssuedCode", "IssuedToken", "Login", "dump", "load"]

R = TypeVar("R")


@dataclass(frozen=True)
class Login:
    """An authorization request on its way through the consent page and the provider, bound to the
    browser session that started it (`browser`: the digest of its cookie)."""

    client_id: str
    redirect_uri: str
    state: str | None
    code_challenge: str
    scope: str
    resource: str
    browser: str
    verifier: str = ""  # the PKCE verifier of the proxy's own request to the provider
    nonce: str = ""


@dataclass(frozen=True)
class Grant:
    """A user's consent to a client, with who the provider said the user is and its sealed tokens."""

    client_id: str
    subject: str
    scope: str
    resource: str
    upstream: str


@dataclass(frozen=True)
class IssuedCode:
    """An authorization code: single use, for one client, redirect URI and PKCE challenge."""

    grant_id: str
    client_id: str
    redirect_uri: str
    code_challenge: str


@dataclass(frozen=True)
class IssuedToken:
    """An access or refresh token the proxy issued, under a grant."""

    grant_id: str
    client_id: str
    scope: str
    expires_at: float


def dump(record: Any) -> bytes:
    """A record as stored."""
    return orjson.dumps(dataclasses.asdict(record))


def load(kind: type[R], raw: bytes | None) -> R | None:
    """The stored record, or None when there was none."""
    if raw is None:
        return None
    return kind(**orjson.loads(raw))
