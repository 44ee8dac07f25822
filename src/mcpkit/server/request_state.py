"""Sealed `requestState`: what a server hands the client between the rounds of an input-required request.

Spec 2026-07-28 patterns "Multi Round-Trip Requests": the state is attacker-controlled input, so
its integrity is protected (HMAC-SHA256) and it is bound to the request it was issued for, carries a
short expiry and, when the deployment knows one, the authenticated principal. Replicas that share
the key accept each other's state, so no shared store is needed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import time
from pathlib import Path

import orjson

from ..protocol.errors import InvalidParams, MCPError
from ..protocol.jsonrpc import JSON

__all__ = ["MIN_KEY_BYTES", "StateSealer", "read_state_key", "request_binding"]

log = logging.getLogger("mcpkit")
MIN_KEY_BYTES = 32  # HMAC-SHA256's own size: a shorter shared secret is easier to guess than the MAC


def read_state_key(path: str | Path) -> bytes:
    """The requestState key kept in the file at `path`: its bytes without surrounding whitespace, so
    `openssl rand -hex 32 > FILE` makes one. ValueError, in one line, for a file that cannot be read or
    holds fewer than MIN_KEY_BYTES bytes."""
    try:
        key = Path(path).read_bytes().strip()
    except OSError as exc:
        raise ValueError(f"cannot read the state key file {str(path)!r}: {exc.strerror}") from None
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"the state key file {str(path)!r} holds {len(key)} bytes, fewer than {MIN_KEY_BYTES}: "
            f"make one with `openssl rand -hex 32 > {path}`"
        )
    return key


def request_binding(method: str, params: JSON, principal: str | None = None) -> str:
    """A digest of what makes a request the same request on retry: its method, target and arguments."""
    salient = {
        "m": method,
        "n": params.get("name"),
        "u": params.get("uri"),
        "a": params.get("arguments"),
        "p": principal,
    }
    return hashlib.sha256(orjson.dumps(salient, option=orjson.OPT_SORT_KEYS)).hexdigest()


class StateSealer:
    """Seals and opens requestState values; `key` may be shared by several replicas.

    Without a key, a random one is made for this process: state it sealed is refused after a
    restart or by another replica, so the first seal logs a warning saying so. An empty key is
    refused (ValueError): it would let anyone forge state.
    """

    def __init__(self, key: bytes | None = None, *, ttl: float = 600.0, max_size: int = 64 * 1024) -> None:
        if key is not None and not key:
            raise ValueError("state_key must not be empty: give every replica the same random bytes")
        self.key = key if key is not None else secrets.token_bytes(32)
        self.random_key = key is None
        self._warned = False
        self.ttl = ttl
        self.max_size = max_size

    def seal(self, payload: JSON, binding: str, now: float | None = None) -> str:
        if self.random_key and not self._warned:
            self._warned = True
            log.warning(
                "requestState is sealed with a random per-process key: after a restart, or on a replica "
                "with another key, clients' in-flight input_required rounds fail; pass "
                "Server(state_key=...) with the same secret bytes on every replica"
            )
        expires = (time.time() if now is None else now) + self.ttl
        body = _b64(orjson.dumps({"b": binding, "e": expires, "d": payload}))
        return f"{body}.{_b64(self._mac(body))}"

    def open(self, token: object, binding: str, now: float | None = None) -> JSON:
        """The payload; -32602 for state that was altered, expired or issued for another request."""
        if not isinstance(token, str) or len(token) > self.max_size or token.count(".") != 1:
            raise _refused("it is not a value this server issued")
        body, mac = token.split(".")
        try:
            valid = hmac.compare_digest(_unb64(mac), self._mac(body))
            state = orjson.loads(_unb64(body)) if valid else None
        except ValueError:
            valid, state = False, None
        if not valid or not isinstance(state, dict):
            raise _refused("its integrity check failed")
        if state.get("b") != binding:
            raise _refused("it was issued for a different request")
        expires = state.get("e")
        if not isinstance(expires, float | int) or (time.time() if now is None else now) > expires:
            raise _refused("it has expired")
        payload = state.get("d")
        return payload if isinstance(payload, dict) else {}

    def _mac(self, body: str) -> bytes:
        return hmac.new(self.key, body.encode("ascii"), hashlib.sha256).digest()


def _refused(why: str) -> MCPError:
    return InvalidParams(f"Invalid params: requestState rejected: {why}")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, UnicodeEncodeError) as exc:
        raise ValueError("not base64url") from exc
