"""How long the HTTP client waits before reopening an SSE stream the server closed.

Spec 2025-11-25 transports "Resumability and Redelivery": the client SHOULD wait the server's
`retry` before reconnecting. A server may send `retry: 0` and close at once, forever; so the wait
never drops below a floor, and each reconnection that brought nothing (no event, no new id) waits
longer, up to a cap, with jitter so that many clients do not come back in step.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Backoff"]

_MAX_EXPONENT = 64  # beyond this the cap holds anyway; keeps factor ** n finite


@dataclass(frozen=True, slots=True)
class Backoff:
    """The reconnect delay policy: `floor_ms` at least, growing by `factor` per empty stream, up to `max_ms`.

    `jitter` is the share of a grown delay that may be taken off at random (0 = none, 1 = all of it);
    a delay never drops below the floor or the server's `retry`.
    """

    floor_ms: int = 250
    max_ms: int = 30_000
    factor: float = 2.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.floor_ms < 0 or self.max_ms < self.floor_ms:
            raise ValueError("Backoff needs 0 <= floor_ms <= max_ms")
        if self.factor < 1 or not 0 <= self.jitter <= 1:
            raise ValueError("Backoff needs factor >= 1 and 0 <= jitter <= 1")

    def delay(self, retry_ms: int, misses: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait: the server's `retry_ms` (at least the floor) after a stream that brought
        something; after `misses` empty streams in a row, that times factor**misses, capped, jittered."""
        base = max(self.floor_ms, retry_ms)
        if misses <= 0:
            return base / 1000
        grown = min(max(self.max_ms, base), base * self.factor ** min(misses, _MAX_EXPONENT))
        return max(base, grown * (1 - self.jitter * rand())) / 1000
