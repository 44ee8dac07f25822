"""Per-client limits of a Streamable HTTP server, for deployments that can tell clients apart.

The server cannot know who a client is: `session_key` (given by the application) maps a request's ASGI
scope to an identity, such as the peer address (`client_address`; behind a proxy, every client has the
proxy's) or the subject of a verified Authorization token. Requests it maps to None are not counted.
With it, one client holds at most `limit` of something at once (sessions, stateless requests in flight);
one more is refused with 429 Too Many Requests, Retry-After, and a SERVER_BUSY (-32010) JSON-RPC error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ...protocol.errors import SERVER_BUSY
from ...protocol.http_rules import HTTPRefusal
from ...protocol.jsonrpc import RequestId
from .asgi import Scope

__all__ = ["ClientCounts", "SessionKey", "client_address"]

SessionKey = Callable[[Scope], str | None]


def client_address(scope: Scope) -> str | None:
    """The peer's IP address, as the ASGI server saw it (None when it does not say)."""
    client = scope.get("client")
    return str(client[0]) if client else None


class ClientCounts:
    """How many of `what` each client holds, at most `limit` each."""

    def __init__(self, what: str, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the per-client limit of {what} must be positive")
        self.what = what
        self.limit = limit
        self.counts: dict[str, int] = {}

    def acquire(self, key: str | None) -> None:
        """Count one more for `key`; HTTPRefusal 429 if it already holds `limit`."""
        if key is None:
            return
        held = self.counts.get(key, 0)
        if held >= self.limit:
            message = f"Too Many Requests: this client already holds {self.limit} {self.what}"
            raise HTTPRefusal(429, message, SERVER_BUSY, retry_after="1")
        self.counts[key] = held + 1

    def release(self, key: str | None) -> None:
        if key is None:
            return
        held = self.counts.get(key, 0) - 1
        if held > 0:
            self.counts[key] = held
        else:
            self.counts.pop(key, None)  # a client holding nothing costs nothing

    @contextmanager
    def held(self, key: str | None, rid: RequestId | None = None) -> Iterator[None]:
        """One more held by `key` for the block; a refusal names `rid`, the refused request's id."""
        try:
            self.acquire(key)
        except HTTPRefusal as refusal:
            refusal.rid = rid
            raise
        try:
            yield
        finally:
            self.release(key)
