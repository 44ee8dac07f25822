"""Cache hints on stateless results (2026-07-28 server utilities "Caching")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CacheHint"]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """`ttlMs`: how long a client may reuse the result; `cacheScope`: "public" lets shared
    intermediaries keep it, "private" keeps it within one authorization context.

    The default (0 ms, private) never serves stale data and never shares it; raise it per server
    or per resource where lists and contents change rarely.
    """

    ttl_ms: int = 0
    scope: Literal["public", "private"] = "private"

    def __post_init__(self) -> None:
        if self.ttl_ms < 0 or self.scope not in ("public", "private"):
            raise ValueError("ttl_ms must be >= 0 and scope 'public' or 'private'")

    def fields(self) -> dict[str, Any]:
        return {"ttlMs": self.ttl_ms, "cacheScope": self.scope}
