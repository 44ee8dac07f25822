"""Where a Streamable HTTP server keeps the SSE events it sent, so a client can resume a stream.

Spec: transports "Resumability and Redelivery". Every event the server writes is stored first; a GET
with Last-Event-ID replays what followed that event on the stream it names, and only that stream.
`EventStore` is the interface (a shared store such as Redis can implement it); `InMemoryEventStore` is
the bounded default for one process.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from ...protocol.http_rules import format_event_id, parse_event_id

__all__ = ["EventStore", "EventsExpired", "InMemoryEventStore", "Replay", "UnknownEventId"]


class UnknownEventId(LookupError):
    """The Last-Event-ID is malformed, or was never issued in this session."""


class EventsExpired(UnknownEventId):
    """Events after this Last-Event-ID are no longer retained, so a replay would be incomplete."""


@dataclass(frozen=True, slots=True)
class Replay:
    """The stream a Last-Event-ID names, and its events after that id, oldest first: (event id, data)."""

    stream_id: str
    events: tuple[tuple[str, bytes], ...]


class EventStore(Protocol):
    async def store(self, session_id: str, stream_id: str, data: bytes) -> str:
        """Keep `data` (one event on `stream_id`) and return its event id, unique within the session.

        The id is `format_event_id(stream_id, n)` for an `n` that grows with each event of the session
        (the server reads the stream back out of a Last-Event-ID with `parse_event_id`). `stream_id` is
        made of letters, digits, "_" and "."; an empty `data` marks a priming event.
        """
        ...

    async def replay_after(self, session_id: str, last_event_id: str) -> Replay:
        """The events stored after `last_event_id` on the stream it names; never another stream's.

        Raises UnknownEventId for an id this session never issued, EventsExpired once some of the
        events that followed it have been dropped.
        """
        ...

    async def forget(self, session_id: str) -> None:
        """Drop every event of a session that has ended."""
        ...


_SLACK = 64


@dataclass(slots=True)
class _SessionEvents:
    next_seq: int = 1
    size: int = 0
    forgotten: bool = False
    # (seq, stream id, data), seq contiguous from events[0] on: eviction only ever takes the oldest.
    events: deque[tuple[int, str, bytes]] = field(default_factory=deque)

    def holds(self, seq: int) -> bool:
        """Whether the event `seq` is still kept (an entry of the store-wide order may be stale)."""
        return not self.forgotten and bool(self.events) and self.events[0][0] <= seq


class InMemoryEventStore:
    """An EventStore in this process's memory, bounded per session and in total.

    Each session keeps at most `max_events` events and `max_bytes` bytes of event data, its oldest going
    first. Across all sessions the store keeps at most `max_total_events` events and `max_total_bytes`
    bytes: past either, the oldest events of any session are dropped first (so idle sessions lose theirs
    before active ones, and a replay from a dropped event is EventsExpired). A session's events go when
    it is forgotten.
    """

    def __init__(
        self,
        *,
        max_events: int = 1000,
        max_bytes: int = 4 * 1024 * 1024,
        max_total_events: int = 100_000,
        max_total_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        if min(max_events, max_bytes, max_total_events, max_total_bytes) < 1:
            raise ValueError("event store limits must be positive")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_total_events = max_total_events
        self.max_total_bytes = max_total_bytes
        self._sessions: dict[str, _SessionEvents] = {}
        # Every event in the order stored, as (its session, seq); entries of dropped events are skipped
        # when met and swept out once they outnumber the live ones.
        self._order: deque[tuple[_SessionEvents, int]] = deque()
        self._events = 0
        self._bytes = 0

    @property
    def session_count(self) -> int:
        return len(self._sessions)

    @property
    def event_count(self) -> int:
        return self._events

    @property
    def byte_count(self) -> int:
        return self._bytes

    @property
    def order_length(self) -> int:
        """Entries in the store-wide order, live or stale: at most twice the events kept, plus 64."""
        return len(self._order)

    async def store(self, session_id: str, stream_id: str, data: bytes) -> str:
        session = self._sessions.get(session_id)
        if session is None:  # not setdefault: that would build (and drop) a _SessionEvents per event
            session = self._sessions[session_id] = _SessionEvents()
        seq = session.next_seq
        event_id = format_event_id(stream_id, seq)
        session.next_seq += 1
        session.events.append((seq, stream_id, data))
        session.size += len(data)
        self._events += 1
        self._bytes += len(data)
        self._order.append((session, seq))
        while len(session.events) > self.max_events or (
            session.size > self.max_bytes and len(session.events) > 1
        ):
            self._drop_oldest(session)
        self._bound_total()
        return event_id

    def _drop_oldest(self, session: _SessionEvents) -> None:
        size = len(session.events.popleft()[2])
        session.size -= size
        self._events -= 1
        self._bytes -= size

    def _bound_total(self) -> None:
        while self._events > self.max_total_events or (
            self._bytes > self.max_total_bytes and self._events > 1
        ):
            session, seq = self._order.popleft()
            if session.holds(seq):  # the oldest live entry of a session is its first event
                self._drop_oldest(session)
        self._sweep()

    def _sweep(self) -> None:
        """Drop stale order entries once they outnumber live events (amortized O(1) per event)."""
        if not self._events:
            self._order.clear()
        elif len(self._order) > 2 * self._events + _SLACK:
            self._order = deque(entry for entry in self._order if entry[0].holds(entry[1]))

    async def replay_after(self, session_id: str, last_event_id: str) -> Replay:
        parsed = parse_event_id(last_event_id)
        session = self._sessions.get(session_id)
        if parsed is None or session is None or not 1 <= parsed[1] < session.next_seq:
            raise UnknownEventId(f"Last-Event-ID {last_event_id!r} was not issued in this session")
        stream_id, seq = parsed
        first = session.events[0][0] if session.events else session.next_seq
        if seq < first - 1:
            raise EventsExpired(f"events after Last-Event-ID {last_event_id!r} are no longer retained")
        if seq >= first and session.events[seq - first][1] != stream_id:
            raise UnknownEventId(f"Last-Event-ID {last_event_id!r} names another stream than it was sent on")
        later = (e for e in session.events if e[0] > seq and e[1] == stream_id)
        return Replay(stream_id, tuple((format_event_id(s, n), data) for n, s, data in later))

    async def forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.forgotten = True
            self._events -= len(session.events)
            self._bytes -= session.size
            session.events.clear()  # stale order entries may still name it until the next sweep
            self._sweep()
