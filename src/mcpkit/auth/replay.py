"""Where a protected server remembers the DPoP proofs it accepted, so none is accepted twice (RFC 9449
§11.1): one interface, with the process's memory behind it or a store every worker of a cluster shares
(`mcpkit.cluster.RedisReplayStore`, from `RedisBackplane.replay_store()`), chosen where the app is built."""

from __future__ import annotations

from typing import Protocol

from ..protocol.dpop_proof import ReplayCache

__all__ = ["InMemoryReplayStore", "ReplayStore"]


class ReplayStore(Protocol):
    """The `jti`s of accepted proofs, by the key that signed them."""

    async def first_use(self, key: str, jti: str, until: float, now: float) -> bool:
        """Remember (`key`, `jti`) until `until` and return True; False when it is remembered already (a
        replay). Nothing is forgotten before its `until`: when there is no room, or the store cannot be
        reached, raise ReplayCheckUnavailable."""
        ...


class InMemoryReplayStore:
    """A ReplayStore in this process, of at most `max_entries`: enough for one process, not for several
    workers behind one URL (each would accept a proof another one accepted)."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.cache = ReplayCache(max_entries)

    def __len__(self) -> int:
        return len(self.cache)

    async def first_use(self, key: str, jti: str, until: float, now: float) -> bool:
        return self.cache.add(key, jti, until, now)
