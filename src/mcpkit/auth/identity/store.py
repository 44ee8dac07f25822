"""Where the login proxy keeps what outlives one request: registered clients, logins in progress, codes,
grants and the tokens it issued. One small interface, the process's memory behind it or Redis for several
workers (`mcpkit.cluster.RedisIdentityStore`), chosen where the authorization server is built."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["IdentityStore", "IdentityStoreFull", "MemoryIdentityStore"]


class IdentityStoreFull(Exception):
    """The store has no room for another value now: the request is answered 503, nothing is evicted."""


class IdentityStore(Protocol):
    """Opaque values under string keys, each forgotten after its time to live."""

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        """Keep `value` under `key` for `ttl` seconds, replacing what was there; IdentityStoreFull when
        there is no room."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The value under `key`, or None once it expired or was removed."""
        ...

    async def take(self, key: str) -> bytes | None:
        """The value under `key`, removed in the same step: of two concurrent takes only one gets it
        (what makes codes, consent tokens and refresh tokens single-use)."""
        ...

    async def delete(self, key: str) -> None:
        """Forget `key`."""
        ...


class MemoryIdentityStore:
    """An IdentityStore in this process's memory: for one process (several workers need a shared one).
    At most `max_entries` values: registrations and authorization pages anyone may ask for cannot grow
    it without bound (past it, expired values are swept, and if none were, the put is refused)."""

    def __init__(self, max_entries: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        self._values: dict[str, tuple[bytes, float]] = {}
        self.max_entries = max_entries
        self._clock = clock

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        """The keys it holds now (what a copy of the store would show)."""
        return list(self._values)

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        now = self._clock()
        if key not in self._values and len(self._values) >= self.max_entries:
            self._sweep(now)
            if len(self._values) >= self.max_entries:
                raise IdentityStoreFull(f"the identity store holds {self.max_entries} values")
        self._values[key] = (value, now + ttl)

    async def get(self, key: str) -> bytes | None:
        found = self._values.get(key)
        if found is None:
            return None
        if found[1] <= self._clock():
            del self._values[key]
            return None
        return found[0]

    async def take(self, key: str) -> bytes | None:
        found = self._values.pop(key, None)  # no await between reading and removing: atomic
        if found is None or found[1] <= self._clock():
            return None
        return found[0]

    async def delete(self, key: str) -> None:
        self._values.pop(key, None)

    def _sweep(self, now: float) -> None:
        for key in [k for k, (_, until) in self._values.items() if until <= now]:
            del self._values[key]
