"""A stored event of a cluster session, and its id: `<stream>.<epoch>-<seq>`.

`seq` numbers the session's events; `epoch` is the Redis primary's clock (ms) when the event was
stored. A failover to a replica that lagged rewinds `seq` (the events it had not received are gone),
and the next events get numbers a client already holds: their epochs differ, so an id is never issued
twice, and a resumption from an event the store lost is told so (`HistoryLost`), not replayed from
another event nor refused as never issued.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.http_rules import format_event_id, parse_event_id
from ..transports.http_server.event_store import UnknownEventId

__all__ = ["Event", "HistoryLost", "event_id", "parse_id"]


class HistoryLost(UnknownEventId):
    """The event a Last-Event-ID names was issued here but the store lost it (a failover to a replica
    that had not received it): the events after it cannot be told apart from those lost with it."""

    def __init__(self, stream_id: str, message: str) -> None:
        super().__init__(message)
        self.stream_id = stream_id


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    stream_id: str
    final: bool
    data: bytes
    dropped: bool = False  # its data is gone (retention, a cap, the budget): resuming before it is expired
    epoch: str = ""

    @property
    def event_id(self) -> str:
        return event_id(self.stream_id, self.epoch, self.seq)


def event_id(stream_id: str, epoch: str, seq: int) -> str:
    return format_event_id(f"{stream_id}.{epoch}" if epoch else stream_id, seq)


def parse_id(value: str) -> tuple[str, str, int] | None:
    """(stream, epoch, seq) of an id `event_id` made; None for anything else."""
    parsed = parse_event_id(value)
    if parsed is None:
        return None
    stream_id, _, epoch = parsed[0].rpartition(".")
    if not stream_id or not epoch.isdigit():
        return None
    return stream_id, epoch, parsed[1]


def decode(raw: bytes) -> Event:
    """An event as the READ script returns it: "seq NL stream NL flag NL epoch NL data"."""
    seq, stream_id, flag, epoch, data = raw.split(b"\n", 4)
    final, dropped = flag in (b"f", b"X"), flag in (b"x", b"X")
    return Event(int(seq), stream_id.decode(), final, data, dropped, epoch.decode())
