"""API keys: static bearer tokens for a server that has no authorization server, as a TokenVerifier.

A key file has one key a line, `key subject scope...` (blank lines and `#` comments are skipped). The key
is the secret itself or, better, its hash `sha256:<64 hex digits>` (`hash_api_key`), so the file gives
nothing away. Keys are random (`new_api_key`: 256 bits), so a plain SHA-256 is enough: there is nothing
to guess that a slow hash would protect. `APIKeyVerifier.from_file` reads the file again when it changes,
so a key is added or revoked without a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..protocol.resource_auth import AccessToken, InvalidToken

__all__ = [
    "API_KEY_ISSUER",
    "MIN_KEY_LENGTH",
    "APIKey",
    "APIKeyFile",
    "APIKeyVerifier",
    "hash_api_key",
    "new_api_key",
    "parse_api_keys",
]

log = logging.getLogger(__name__)

# The `iss` of every API key's AccessToken: a subject "alice" of a key is never the principal "alice" of
# an authorization server's token (a session opened with one is not the other's).
API_KEY_ISSUER: Final = "urn:mcpkit:api-key"
MIN_KEY_LENGTH: Final = 20
_HASHED: Final = re.compile(r"sha256:([0-9a-fA-F]{64})")
# What an Authorization: Bearer value may hold (RFC 6750 §2.1 b64token): any other key could never be sent.
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class APIKey:
    """One accepted key: the SHA-256 `digest` of the secret, whom it speaks for and what it allows.
    `claims` are added to its AccessToken's (a tenant, roles)."""

    digest: bytes = field(repr=False)
    subject: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, key: str, subject: str, scopes: Iterable[str] = (), claims: Mapping[str, Any] | None = None
    ) -> APIKey:
        """The entry for `key` (the secret, or its `sha256:<hex>` hash). ValueError for a secret shorter
        than MIN_KEY_LENGTH or not sendable as a Bearer token."""
        hashed = _HASHED.fullmatch(key)
        if hashed is not None:
            digest = bytes.fromhex(hashed.group(1))
        elif key.startswith("sha256:"):
            raise ValueError("a sha256: key hash must be 64 hexadecimal digits")
        elif len(key) < MIN_KEY_LENGTH:
            raise ValueError(
                f"an API key must be at least {MIN_KEY_LENGTH} characters (new_api_key makes one)"
            )
        elif not _B64TOKEN.fullmatch(key):
            raise ValueError("an API key may hold only letters, digits and -._~+/ (then = padding)")
        else:
            digest = hashlib.sha256(key.encode()).digest()
        if not subject:
            raise ValueError("an API key needs a subject")
        return cls(digest, subject, frozenset(scopes), dict(claims or {}))

    @property
    def key_id(self) -> str:
        """A short name for the key, safe to log: the first 12 hex digits of its hash."""
        return self.digest.hex()[:12]


def hash_api_key(key: str) -> str:
    """What a key file may hold instead of `key`: `sha256:<hex>`."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def new_api_key() -> tuple[str, str]:
    """A fresh random key (256 bits, URL-safe) and its hash for the key file: give the first to the
    client, keep the second."""
    key = secrets.token_urlsafe(32)
    return key, hash_api_key(key)


def parse_api_keys(text: str, source: str = "the key file") -> list[APIKey]:
    """The entries of a key file's `text`; ValueError naming the line (never its key) of a malformed one
    or of a key given twice."""
    entries: list[APIKey] = []
    seen: dict[bytes, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) < 2:
            raise ValueError(f"{source}, line {number}: expected 'key subject scope...'")
        try:
            entry = APIKey.of(words[0], words[1], words[2:])
        except ValueError as exc:
            raise ValueError(f"{source}, line {number}: {exc}") from None
        if entry.digest in seen:
            raise ValueError(f"{source}, line {number}: the same key as line {seen[entry.digest]}")
        seen[entry.digest] = number
        entries.append(entry)
    return entries


class APIKeyVerifier:
    """Accepts the keys it was given (or those of an APIKeyFile, as the file changes), as AccessTokens for
    `audience` (this server's resource URL).

    The presented key's SHA-256 is compared with every entry's in constant time (`hmac.compare_digest`,
    no early exit), so the time taken says nothing about which entry came close. The AccessToken has the
    entry's subject and scopes, `iss` API_KEY_ISSUER, no expiry, no client id, and `claims["key_id"]`.
    """

    def __init__(self, keys: Iterable[APIKey] | APIKeyFile, *, audience: str) -> None:
        self._file = keys if isinstance(keys, APIKeyFile) else None
        self.keys = keys.read() if isinstance(keys, APIKeyFile) else _distinct(keys)
        self.audience = audience

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        audience: str,
        check_every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> APIKeyVerifier:
        """The keys of the file at `path` (see the module docstring), read again when it changes
        (APIKeyFile)."""
        return cls(APIKeyFile(path, check_every, clock), audience=audience)

    async def verify(self, token: str) -> AccessToken:
        """The key's AccessToken; InvalidToken for a key not in the file."""
        fresh = self._file.changed() if self._file is not None else None
        if fresh is not None:  # an emptied file revokes every key
            self.keys = fresh
        presented = hashlib.sha256(token.encode()).digest()
        found: APIKey | None = None
        for entry in self.keys:
            if hmac.compare_digest(presented, entry.digest):
                found = entry
        if found is None:
            raise InvalidToken("the API key is not known")
        return self._token(found)

    def _token(self, entry: APIKey) -> AccessToken:
        claims = {
            **entry.claims,
            "iss": API_KEY_ISSUER,
            "sub": entry.subject,
            "aud": self.audience,
            "scope": " ".join(sorted(entry.scopes)),
            "key_id": entry.key_id,
        }
        return AccessToken(
            subject=entry.subject,
            client_id=None,
            scopes=entry.scopes,
            expires_at=None,
            audience=(self.audience,),
            claims=claims,
        )


def _distinct(keys: Iterable[APIKey]) -> tuple[APIKey, ...]:
    entries = tuple(keys)
    if len({k.digest for k in entries}) != len(entries):
        raise ValueError("the same API key is given twice")
    return entries


class APIKeyFile:
    """A key file, read again when its size, modification time or inode (an atomic rename) changed:
    looked at, at most every `check_every` seconds, when a key is presented. A changed file that cannot
    be read or parsed is logged, and the keys read before stay."""

    def __init__(
        self, path: str | Path, check_every: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = Path(path)
        self.check_every = check_every
        self.clock = clock
        self._seen: tuple[int, int, int] | None = None
        self._checked_at = 0.0

    def read(self) -> tuple[APIKey, ...]:
        """The file's keys now; OSError or ValueError (naming the line) as they come."""
        self._checked_at = self.clock()
        found = self.path.stat()
        # the state is noted before reading: a change made meanwhile is read again at the next check
        self._seen = (found.st_mtime_ns, found.st_size, found.st_ino)
        return _distinct(parse_api_keys(self.path.read_text(encoding="utf-8"), str(self.path)))

    def changed(self) -> tuple[APIKey, ...] | None:
        """The keys of the file if it changed since it was read (looked at once per `check_every`)."""
        if self.clock() - self._checked_at < self.check_every:
            return None
        try:
            found = self.path.stat()
            if (found.st_mtime_ns, found.st_size, found.st_ino) == self._seen:
                self._checked_at = self.clock()
                return None
            return self.read()
        except (OSError, ValueError) as exc:
            self._checked_at = self.clock()
            log.warning("the API key file %s was not read again: %s; its previous keys stay", self.path, exc)
            return None
