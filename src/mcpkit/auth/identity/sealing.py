"""The login proxy's secrets: upstream tokens sealed before they are stored (AES-256-GCM, bound to the grant
they belong to), consent forms' CSRF tokens, and the digests credentials are stored under (so a copy of
the store holds no usable code or token)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["Keys", "digest", "new_secret"]


def new_secret() -> str:
    """A fresh unguessable value (256 bits, base64url): codes, tokens, states, session ids."""
    return secrets.token_urlsafe(32)


def digest(value: str) -> str:
    """The SHA-256 of a credential, hex: the key it is stored under."""
    return hashlib.sha256(value.encode()).hexdigest()


class Keys:
    """Keys derived from one secret of at least 32 bytes (the same on every worker sharing a store)."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 32:
            raise ValueError("the secret key must be at least 32 bytes")
        self._aead = AESGCM(self._derive(secret, b"mcpkit identity: upstream tokens"))
        self._csrf = self._derive(secret, b"mcpkit identity: consent csrf")

    @staticmethod
    def _derive(secret: bytes, label: bytes) -> bytes:
        return hmac.new(secret, label, hashlib.sha256).digest()

    def seal(self, plaintext: bytes, bound_to: str) -> str:
        """`plaintext` encrypted and authenticated, usable only with the same `bound_to`."""
        nonce = os.urandom(12)
        sealed = nonce + self._aead.encrypt(nonce, plaintext, bound_to.encode())
        return base64.urlsafe_b64encode(sealed).decode("ascii")

    def open(self, sealed: str, bound_to: str) -> bytes | None:
        """What `seal` sealed for `bound_to`, or None if it was altered or sealed for something else."""
        raw = base64.urlsafe_b64decode(sealed.encode("ascii"))
        try:
            return self._aead.decrypt(raw[:12], raw[12:], bound_to.encode())
        except InvalidTag:
            return None

    def csrf(self, browser: str, consent: str) -> str:
        """The CSRF token of the consent form `consent` shown to the browser session `browser`."""
        mac = hmac.new(self._csrf, f"{browser}\n{consent}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")

    def csrf_matches(self, given: str | None, browser: str, consent: str) -> bool:
        """Whether `given` is the CSRF token of that form for that browser (constant-time)."""
        return given is not None and hmac.compare_digest(given, self.csrf(browser, consent))
