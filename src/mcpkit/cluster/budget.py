"""The cluster-wide bound on stored event data (`RedisBackplane(max_total_bytes=...)`).

Per session, events are capped by `max_events` / `max_bytes` and an ended stream's data lives
`ended_retention`; this bounds their sum over every session. No request touches a global key for it,
and an idle cluster sends Redis nothing for it. Each worker counts the bytes it stored; once per
`interval`, if it stored any (or the cluster is over), it adds them to `{prefix}{g}:budget` (a small hash:
`total`, the last measured sum, `in`, what was stored since, `full`, the verdict). While `total` + `in`
stays under the budget nothing more happens: it is an upper bound (data also leaves, by retention and
caps). Past it, that worker measures (one at a time, under a lease): the sessions' exact sizes (an
index entry whose data expired still counts in `bytes`), biggest first, then the data of ended streams
goes, biggest sessions first, then, still over, `full` is set and published on the bus, and every
worker refuses new sessions and new requests (503, see `http`) until a later measure (by a worker
that stored, or one that is refusing) finds the sum back under; each worker logs both once.
Requests already admitted store their events to the end, so no response is lost: the overshoot is
what they store meanwhile, plus an interval of traffic.

On a Redis Cluster `{prefix}{g}:budget` and the lease are two small keys of the cluster-wide slot,
touched once per interval by a worker that stored events; the measure reads the sessions' records on
their shards (a pipeline split by shard).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import anyio
import orjson
from redis.exceptions import RedisError

if TYPE_CHECKING:
    from .state import SharedState

__all__ = ["EventBudget"]

log = logging.getLogger("mcpkit.cluster")
_BATCH = 500

# KEYS: budget; ARGV: bytes stored by this worker since its last call -> {total, in, full}
_ADD = """
local inflow = redis.call('HINCRBY', KEYS[1], 'in', ARGV[1])
local at = redis.call('HMGET', KEYS[1], 'total', 'full')
return {tonumber(at[1] or '0'), inflow, tonumber(at[2] or '0')}
"""


class EventBudget:
    """One worker's part in keeping the cluster's stored events under `state.max_total_bytes`."""

    def __init__(self, state: SharedState, worker: str, interval: float = 1.0) -> None:
        self.state = state
        self.worker = worker
        self.interval = interval
        self.total = 0  # the last measured sum, in bytes
        self._add = state.redis.register_script(_ADD)

    async def run(self) -> None:
        while True:
            try:
                await self.check()
            except RedisError as exc:  # Redis away: requests report it; the verdict stands until back
                log.debug("event budget check failed: %s", exc)
            await anyio.sleep(self.interval)

    async def check(self) -> None:
        """One step: what this worker stored is added; over the bound, the lease holder measures."""
        state = self.state
        stored, state.stored = state.stored, 0
        if not stored and not state.full:
            return
        key = state.shared("budget")
        try:
            total, inflow, full = await self._add(keys=[key], args=[stored])
        except RedisError:
            state.stored += stored
            raise
        self.total = int(total)
        lease = state.shared("budget:lease")
        over = int(total) + int(inflow) > state.max_total_bytes
        # one measure at a time; the lease outlives a worker that dies measuring by a few intervals
        if over and await state.redis.set(lease, self.worker, nx=True, px=int(self.interval * 3000)):
            try:
                self.total = await self.measure()
                full = self.total > state.max_total_bytes
                async with state.redis.pipeline(transaction=True) as pipe:
                    pipe.hset(key, mapping={"total": self.total, "full": int(full)})
                    pipe.hincrby(key, "in", -int(inflow))
                    await pipe.execute()
                await state.redis.spublish(state.bus, orjson.dumps(self.heard_as(bool(full))))
            finally:
                await state.redis.delete(lease)
        self._verdict(bool(int(full)))

    def heard_as(self, full: bool) -> dict[str, object]:
        """The verdict as the bus carries it to every worker's `heard`."""
        return {"k": "budget", "full": full, "total": self.total}

    def heard(self, message: dict[str, object]) -> None:
        total = message.get("total")
        self.total = total if isinstance(total, int) else self.total
        self._verdict(message.get("full") is True)

    async def measure(self) -> int:
        """The bytes of event data kept across the cluster, shed as described above while over."""
        state, limit = self.state, self.state.max_total_bytes
        found = await state.redis.zrangebyscore(state.shared("sessions"), int(time.time() * 1000), "+inf")
        sessions = [sid.decode() if isinstance(sid, bytes) else str(sid) for sid in found]
        sizes: dict[str, int] = {}
        for start in range(0, len(sessions), _BATCH):
            batch = sessions[start : start + _BATCH]
            async with state.redis.pipeline(transaction=False) as pipe:
                for session_id in batch:
                    pipe.hget(state.key(session_id, "s"), "bytes")
                sized = await pipe.execute()
            sizes.update((sid, int(raw or 0)) for sid, raw in zip(batch, sized, strict=True))
        total = sum(sizes.values())
        for shed in (False, True):
            for session_id in sorted(sizes, key=sizes.__getitem__, reverse=True):
                if total <= limit:
                    return total
                kept = await state.kept_bytes(session_id, shed=shed)
                total -= sizes[session_id] - kept
                sizes[session_id] = kept
        return total

    def _verdict(self, full: bool) -> None:
        limit = self.state.max_total_bytes
        if full and not self.state.full:
            log.warning(
                "stored events hold %d bytes, over the budget of %d (max_total_bytes) with no ended stream "
                "left to drop: new sessions and requests get 503 until they are back under",
                self.total,
                limit,
            )
        elif self.state.full and not full:
            log.warning("stored events are back under the budget (%d of %d bytes)", self.total, limit)
        self.state.full = full
