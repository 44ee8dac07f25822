"""A session's requests whose worker died, answered for it. A request answered over SSE is settled by the
first resumption that finds its worker gone (tails.py); one answered as JSON has no stream to resume, so
without this its place among the session's `max_in_flight` would stay taken for good. When a session is
busy, the worker admitting a request first ends the requests of workers whose heartbeat has stopped, each
with the lost answer on its stream (any later resumption reads it), which frees their places."""

from __future__ import annotations

from time import monotonic

import orjson

from .state import SharedState
from .tails import lost_answer

__all__ = ["Reclaimer", "reclaim"]


class Reclaimer:
    """`reclaim`, at most once per `every` seconds for a session on this worker: a client flooding a busy
    session gets its refusals without a scan of the session's record each (`every`: how long a worker's
    heartbeat may be missing before it counts as dead, so a sooner look could find nothing new)."""

    def __init__(self, state: SharedState, every: float) -> None:
        self.state = state
        self.every = every
        self.looked: dict[str, float] = {}  # session -> when this worker last looked

    async def __call__(self, session_id: str) -> int:
        now = monotonic()
        if now - self.looked.get(session_id, -self.every) < self.every:
            return 0
        if len(self.looked) >= 10_000:  # bounded: forgetting only allows one more look
            self.looked.clear()
        self.looked[session_id] = now
        return await reclaim(self.state, session_id)


async def reclaim(state: SharedState, session_id: str) -> int:
    """End the session's requests in flight on dead workers; how many were ended."""
    record = await state.redis.hgetall(state.key(session_id, "s"))
    fields = {_text(key): _text(value) for key, value in record.items()}
    owners = {field[3:]: worker for field, worker in fields.items() if field.startswith("rq:")}
    streams = {rid: field[3:] for field, rid in fields.items() if field.startswith("st:")}
    dead = {worker for worker in set(owners.values()) if not await state.beating(worker)}
    ended = 0
    for rid_json, worker in owners.items():
        if worker not in dead:
            continue
        rid = orjson.loads(rid_json)
        stream = streams.get(rid_json)
        if stream is not None:
            await state.store(session_id, stream, lost_answer(rid), final=True)
        else:
            await state.finish(session_id, rid, "")
        ended += 1
    return ended


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw
