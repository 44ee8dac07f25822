"""What every worker of a cluster shares about its sessions, kept in Redis (see `scripts` for the layout).

Each method is one round trip. Nothing here knows HTTP: the worker's HTTP side (`http`) decides when to
call what; `signals` carries the wake-ups and routed messages between workers.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import orjson
from redis.asyncio.cluster import RedisCluster

from ..runtime.stream import Restored
from ..transports.http_server.event_store import EventsExpired, Replay, UnknownEventId
from ..transports.http_server.sessions import STANDALONE
from . import scripts
from .batch import scripts_of
from .durability import Durability
from .events import Event, HistoryLost, decode, event_id, parse_id
from .failover import FailoverWatch
from .index import SessionIndex
from .list_changes import Views, heard_at_start, not_heard
from .uri_index import UriIndex

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = [
    "Began",
    "DuplicateRequest",
    "Event",
    "EventLogFull",
    "Opened",
    "SessionBusy",
    "SharedState",
    "TakenOver",
]

Arg = bytes | str | int | float


class Began(NamedTuple):
    """What `begin` found of a session, and the id of its request stream's priming event when it was
    asked to store one (None otherwise)."""

    restored: Restored
    primed: str | None


class Opened(NamedTuple):
    """A session `open` reserved: the id of its initialize stream's priming event, when it stored one."""

    primed: str | None


class DuplicateRequest(Exception):
    """A request id already in flight in the session, on some worker."""


class EventLogFull(Exception):
    """The cluster's stored events are over `max_total_bytes` (see `budget`): no new request is taken."""


class SessionBusy(Exception):
    """`max_in_flight` requests of the session are in flight, across the cluster."""


class TakenOver(Exception):
    """A newer standalone GET holds the session's stream."""


class SharedState:
    """The sessions' records, events and subscriptions in one Redis or a Redis Cluster, under `prefix`
    (which holds no `{`: the keys' hash tags are ours)."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        *,
        prefix: str,
        idle_timeout: float,
        max_sessions: int,
        max_events: int,
        max_bytes: int = 4 * 1024 * 1024,
        max_in_flight: int = 100,
        ended_retention: float = 30.0,
        max_total_bytes: int = 256 * 1024 * 1024,
        durability: Durability | None = None,
        heartbeat_ttl: float = 6.0,
    ) -> None:
        self.redis = redis
        self.sharded = isinstance(redis, RedisCluster)  # a script touches one slot only
        self.durability = durability or Durability(redis)
        self.max_in_flight = max_in_flight
        self.heartbeat_ttl = heartbeat_ttl  # how long a worker's heartbeat lives (the backplane's dead_after)
        self.prefix = prefix
        self.bus = self.shared("bus")  # the shard channel every worker reads (signals.py)
        self.idle_ms = int(idle_timeout * 1000)
        self.index = SessionIndex(redis, self.shared("sessions"), self.idle_ms)
        self.watch = FailoverWatch(redis, self._store_final)
        self.ended_ms = max(1, min(int(ended_retention * 1000), self.idle_ms))  # never past the session
        self.max_sessions = max_sessions
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes
        self.full = False  # set by the budget: past it, `create` and `begin` of a request raise EventLogFull
        self.stored = 0  # event bytes this worker stored since the budget last counted them
        script = scripts_of(redis)
        self._admit = script(scripts.ADMIT)
        self._create = script(scripts.CREATE)
        self._open = script(scripts.OPEN)
        self._begin = script(scripts.BEGIN)
        self._store = script(scripts.STORE)
        self._read = script(scripts.READ)
        self._end = script(scripts.END)
        self._take_asked = script(scripts.TAKE_ASKED)
        self._finish = script(scripts.FINISH)
        self._claim = script(scripts.CLAIM)
        self._touch = script(scripts.TOUCH)
        self._catch_up = script(scripts.CATCH_UP)
        self.subscriptions = UriIndex(redis, script, self.key, prefix, self.idle_ms)
        self._shed = script(scripts.SHED)

    async def upkeep(self, interval: float = 1.0) -> None:
        """What a worker does for the cluster off its requests' path, every `interval`: the session count
        (SessionIndex) and the failover check (FailoverWatch)."""
        while True:
            await self.watch.run_once()  # first at once: which server answers before any work
            await anyio.sleep(interval)
            await self.index.run_once()

    def key(self, session_id: str, part: str) -> str:
        return f"{self.prefix}{{{session_id}}}:{part}"

    def shared(self, part: str) -> str:
        """A key (or the bus channel) of the whole cluster: one slot, `{g}`, never a request's."""
        return f"{self.prefix}{{g}}:{part}"

    def alive_key(self, worker: str) -> str:
        """Set while `worker` beats (its heartbeat's TTL)."""
        return f"{self.prefix}alive:{worker}"

    async def beating(self, worker: str) -> bool:
        """Whether `worker`'s heartbeat is current. One missing just after the store changed servers (a
        failover to a replica that lacked it, a restart that kept nothing) counts as current for a
        heartbeat's lifetime (`heartbeat_ttl`), within which every live worker writes its own again:
        a live worker's requests and tasks are not given up for a heartbeat the failover lost."""
        if await self.redis.exists(self.alive_key(worker)):
            return True
        await self.watch.run_once()  # a failover since the last look would explain it
        return self.watch.changed_within(self.heartbeat_ttl)

    def channel(self, session_id: str) -> str:
        """Where a stored event of the session is announced (the stream it is on)."""
        return self.key(session_id, "c")

    def _keys(self, session_id: str) -> list[str]:
        return [self.key(session_id, "s"), self.key(session_id, "e"), self.key(session_id, "u")]

    def _kept_keys(self, session_id: str) -> list[str]:
        return [*self._keys(session_id), self.key(session_id, "d:" + STANDALONE)]

    def _limits(self, session_id: str) -> list[Arg]:
        """What the scripts that store an event take after max_bytes: how long an ended stream's data
        lives, the prefix of `d:<stream>` (a stream's event data) and the standalone stream."""
        return [self.ended_ms, self.key(session_id, ""), STANDALONE]

    async def create(self, session_id: str, principal: str | None, views: Views | None = None) -> bool:
        """Reserve a new session (`open` with no request in flight); False at `max_sessions`."""
        return await self.open(session_id, principal, views) is not None

    async def open(
        self,
        session_id: str,
        principal: str | None,
        views: Views | None = None,
        *,
        worker: str = "",
        request_id: Any = None,
        stream_id: str | None = None,
        prime: bool = False,
    ) -> Opened | None:
        """Reserve a new session (not served until `agreed`), its initialize `request_id` in flight on
        `worker` with its stream `stream_id` (primed when `prime`); None at `max_sessions` in the
        cluster. `views`: what its principal sees of each list now, with a visibility hook (see
        `catch_up`). One round trip on one Redis; two on a Redis Cluster, whose admission is in the
        cluster-wide slot. Raises EventLogFull past the event budget."""
        if self.full:
            raise EventLogFull
        field = _request_field(request_id) if request_id is not None else ""
        args: list[Arg] = [self.idle_ms, principal or "", field, worker, stream_id or ""]
        args += [orjson.dumps(request_id), "p" if prime else "", self.max_events, self.max_bytes]
        args += self._limits(session_id)
        keys = [self.key(session_id, "s"), self.key(session_id, "e"), self.channel(session_id)]
        if self.sharded:
            admit: list[Arg] = [_now_ms(), self.idle_ms, self.max_sessions, session_id]
            counts = await self._admit(keys=[self.shared("sessions"), self.shared("chg")], args=admit)
            if not isinstance(counts, list):
                return None
            found = await self._create(keys=keys, args=[*args, *heard_at_start(counts, views)])
        else:
            keys += [self.shared("sessions"), self.shared("chg")]
            args += [_now_ms(), self.max_sessions, session_id, *heard_at_start([], views)]
            found = await self._open(keys=keys, args=args)
            if not isinstance(found, list):
                return None
        seq, epoch = int(found[0]), _text(found[1])
        return Opened(event_id(stream_id, epoch, seq) if stream_id and seq > 0 else None)

    async def agreed(self, session_id: str, restored: Restored) -> None:
        """The session's agreement, served from now on: confirmed on replicas first when the backplane
        asks for it (see `durability`), as the initialize response acknowledges it."""
        await self.redis.hset(self.key(session_id, "s"), mapping=_agreement(restored))  # type: ignore[arg-type]
        await self.durability.confirm(self.key(session_id, "w"))

    async def begin(self, session_id: str, principal: str | None, **request: Any) -> Restored | None:
        """`begin_request` (its `worker`, `request_id`, `stream_id`) for what the session agreed."""
        began = await self.begin_request(session_id, principal, **request)
        return began.restored if began is not None else None

    async def begin_request(
        self,
        session_id: str,
        principal: str | None,
        *,
        worker: str = "",
        request_id: Any = None,
        stream_id: str | None = None,
        prime: bool = False,
    ) -> Began | None:
        """The session's agreement, its idle time restarted; None when there is no such session (or it
        is another principal's). With `request_id`: that request is in flight on `worker` (raises
        DuplicateRequest if it already is, SessionBusy past `max_in_flight`), and `stream_id` is its
        open stream, whose priming event (2025-11-25) is stored in the same round trip when `prime`;
        EventLogFull past the event budget (answers and notifications are still taken: they complete
        what was admitted)."""
        if self.full and request_id is not None:
            raise EventLogFull
        field = _request_field(request_id) if request_id is not None else ""
        now = _now_ms()
        args: list[Arg] = [now, self.idle_ms, principal or "", field, worker]
        args += [stream_id or "", orjson.dumps(request_id), self.max_in_flight, "p" if prime else ""]
        args += [self.max_events, self.max_bytes, *self._limits(session_id)]
        keys = [*self._kept_keys(session_id), self.channel(session_id)]
        found = await self._begin(keys=keys, args=args)
        if found is None:
            return None
        if found == b"dup":
            raise DuplicateRequest(request_id)
        if found == b"busy":
            raise SessionBusy(request_id)
        version, caps, info, level, seq, epoch, *uris = found
        await self._kept(session_id, now, uris)
        restored = Restored(version.decode(), orjson.loads(caps), orjson.loads(info), level.decode() or None)
        primed = event_id(stream_id, _text(epoch), int(seq)) if stream_id and int(seq) > 0 else None
        return Began(restored, primed)

    async def touch(self, session_id: str) -> bool:
        """The session's idle time restarted (a GET open on it is activity); False when it is gone."""
        now = _now_ms()
        found = await self._touch(keys=self._kept_keys(session_id), args=[now, self.idle_ms])
        if not isinstance(found, list):
            return False
        await self._kept(session_id, now, found)
        return True

    async def _kept(self, session_id: str, now: int, uris: list[bytes]) -> None:
        """The session is alive at `now`: its score in the session count moves (soon, see SessionIndex),
        and its subscriptions' now (`uris`: those due, see scripts.INDEX)."""
        self.index.touch(session_id, now)
        await self.subscriptions.scored_again(session_id, now, uris)

    async def set_level(self, session_id: str, level: str) -> None:
        await self.redis.hset(self.key(session_id, "s"), "lvl", level)

    async def store(self, session_id: str, stream_id: str, data: bytes, *, final: bool = False) -> int:
        """Append one event (`final`: its stream's last, once); its seq, 0 when the session is gone, -1
        when the stream was already finished."""
        return (await self.record(session_id, stream_id, data, final=final))[0]

    async def _store_final(self, session_id: str, stream_id: str, data: bytes) -> int:
        return await self.store(session_id, stream_id, data, final=True)

    async def record(
        self,
        session_id: str,
        stream_id: str,
        data: bytes,
        *,
        final: bool = False,
        agreed: Restored | None = None,
    ) -> tuple[int, str | None]:
        """`store`, and the id of the event stored (None when it was not). `agreed`: the session's
        agreement, written with the initialize response that makes it (`agreed`, in the same round trip
        and confirmed on replicas after it when the backplane asks for it)."""
        keys = [self.key(session_id, "s"), self.key(session_id, "e"), self.channel(session_id)]
        args: list[Arg] = [stream_id, data, "f" if final else "m", self.idle_ms, self.max_events]
        args += [self.max_bytes, *self._limits(session_id)]
        if agreed is not None:
            args += list(_agreement(agreed).values())
        found = await self._store(keys=keys, args=args)
        if agreed is not None:
            await self.durability.confirm(self.key(session_id, "w"))
        if not isinstance(found, list):
            return int(found), None
        seq = int(found[0])
        self.stored += len(data)
        if final:
            self.watch.stored(session_id, stream_id, data)
        return seq, event_id(stream_id, _text(found[1]), seq)

    async def changed(self, method: str) -> None:
        """One more `method` (a list_changed) for every session: see `catch_up`."""
        await self.redis.hincrby(self.shared("chg"), method, 1)

    async def catch_up(self, session_id: str, views: Views | None = None) -> int:
        """Store on the session's standalone stream each list_changed it has not heard since it was
        created (once per method, however many there were); how many. With `views` (a visibility
        hook's: what its principal sees of each list now), only those whose view differs from the
        one it was last told of (or began with) are stored."""
        counts = await self.redis.hgetall(self.shared("chg"))
        keys = [self.key(session_id, "s"), self.key(session_id, "e"), self.channel(session_id)]
        args: list[Arg] = [self.idle_ms, self.max_events, self.max_bytes, *self._limits(session_id)]
        args += not_heard(counts, views)
        return int(await self._catch_up(keys=keys, args=args))

    async def finish(self, session_id: str, request_id: Any, stream_id: str) -> None:
        """A request answered without a stored stream is no longer in flight."""
        keys = [self.key(session_id, "s")]
        await self._finish(keys=keys, args=[_request_field(request_id), "st:" + stream_id])

    async def read(self, session_id: str, after: int, token: str = "") -> tuple[int, list[Event]] | None:
        """(seq of the oldest event kept, the events after `after`); None when the session is gone. With
        the `token` of a `claim`: raises TakenOver once a newer GET claimed the stream, and what is
        returned counts as delivered."""
        keys = [self.key(session_id, "s"), self.key(session_id, "e")]
        found = await self._read(keys=keys, args=[after, token, self.key(session_id, "")])
        if found is None:
            return None
        if found == b"over":
            raise TakenOver(session_id)
        first = int(found[1])
        events = [decode(raw) for raw in found[2:]]
        return first, [e for e in events if e.seq > after]

    async def claim(self, session_id: str, token: str) -> int | None:
        """The standalone GET with `token` holds the session's stream from now on; the last event the
        GETs before it took (None when there is no such session)."""
        found = await self._claim(keys=[self.key(session_id, "s")], args=[token])
        return int(found) if found is not None else None

    async def replay_after(self, session_id: str, last_event_id: str) -> Replay:
        """The events after `last_event_id` on its stream; the rules of InMemoryEventStore."""
        stream_id, events = await self.resume(session_id, last_event_id)
        return Replay(stream_id, tuple((e.event_id, e.data) for e in events))

    async def resume(self, session_id: str, last_event_id: str) -> tuple[str, list[Event]]:
        """The stream `last_event_id` names and its events after that id (`replay_after`'s rules);
        HistoryLost when the store lost that event (see `events`)."""
        parsed = parse_id(last_event_id)
        if parsed is None or parsed[2] < 1:
            raise UnknownEventId(f"Last-Event-ID {last_event_id!r} was not issued in this session")
        stream_id, epoch, seq = parsed
        found = await self.read(session_id, seq - 1)
        if found is None:
            raise UnknownEventId(f"Last-Event-ID {last_event_id!r} was not issued in this session")
        first, events = found
        if seq < first - 1:
            raise EventsExpired(f"events after Last-Event-ID {last_event_id!r} are no longer retained")
        head = events[0] if events and events[0].seq == seq else None
        # just dropped (seq == first - 1): its epoch is gone with it, and every event after it is kept
        if seq != first - 1 and (head is None or head.epoch != epoch):
            lost = f"the session store lost the events up to Last-Event-ID {last_event_id!r} (a failover)"
            raise HistoryLost(stream_id, lost)
        if head is not None and head.stream_id != stream_id:
            raise UnknownEventId(f"Last-Event-ID {last_event_id!r} names another stream than it was sent on")
        later = [e for e in events if e.seq > seq and e.stream_id == stream_id]
        if any(e.dropped for e in later):
            raise EventsExpired(f"events after Last-Event-ID {last_event_id!r} are no longer retained")
        return stream_id, later

    async def stream_request(self, session_id: str, stream_id: str) -> Any:
        """The id of the request whose stream `stream_id` is still open (None: finished)."""
        raw = await self.redis.hget(self.key(session_id, "s"), "st:" + stream_id)
        return orjson.loads(raw) if raw is not None else None

    async def request_owner(self, session_id: str, request_id: Any) -> str | None:
        raw = await self.redis.hget(self.key(session_id, "s"), _request_field(request_id))
        return _text(raw) if raw is not None else None

    async def ask(self, session_id: str, request_id: Any, worker: str) -> None:
        """A request of ours to the session's client, awaiting its answer on `worker`."""
        await self.redis.hset(self.key(session_id, "s"), _asked_field(request_id), worker)

    async def take_asked(self, session_id: str, request_id: Any) -> str | None:
        """The worker awaiting the answer to our request `request_id` of this session, taken (an answer
        counts once); None when this session has no such request."""
        found = await self._take_asked(keys=[self.key(session_id, "s")], args=[_asked_field(request_id)])
        return _text(found) if found is not None else None

    async def forget_asked(self, session_id: str, request_ids: list[Any]) -> None:
        await self.redis.hdel(self.key(session_id, "s"), *[_asked_field(rid) for rid in request_ids])

    async def end(self, session_id: str) -> list[str]:
        """Forget the session everywhere; the workers serving its requests."""
        self.index.forget(session_id)
        args = [self.key(session_id, ""), STANDALONE]
        owners, uris = await self._end(keys=self._keys(session_id), args=args)
        async with self.redis.pipeline(transaction=False) as pipe:
            for uri in uris:
                pipe.zrem(self.subscriptions.sub_key(_text(uri)), session_id)
            pipe.zrem(self.shared("sessions"), session_id)
            await pipe.execute()
        return [_text(o) for o in owners]

    async def kept_bytes(self, session_id: str, *, shed: bool = False) -> int:
        """The size of the session's events whose data is kept; `shed`: its ended streams' data goes
        first, before their retention is up."""
        keys = [self.key(session_id, "s"), self.key(session_id, "e")]
        args = [self.key(session_id, ""), STANDALONE, "shed" if shed else "count"]
        return int(await self._shed(keys=keys, args=args))

    async def level(self, session_id: str) -> str | None:
        raw = await self.redis.hget(self.key(session_id, "s"), "lvl")
        return _text(raw) if raw else None


def _agreement(restored: Restored) -> dict[str | bytes, str | bytes]:
    """The record fields of a session's agreement."""
    caps, info = orjson.dumps(restored.client_capabilities), orjson.dumps(restored.client_info)
    return {"v": restored.version, "caps": caps, "info": info}


def _request_field(request_id: Any) -> str:
    return "rq:" + orjson.dumps(request_id).decode()


def _asked_field(request_id: Any) -> str:
    return "as:" + orjson.dumps(request_id).decode()


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def _now_ms() -> int:
    return int(time.time() * 1000)
