"""Server-Sent Events framing: encode one event, decode a byte stream incrementally. No I/O.

Spec: WHATWG HTML "Server-sent events" (9.2.6, interpreting an event stream), as used by MCP
transports "Streamable HTTP". Lines end in CRLF, LF or CR; a blank line dispatches the event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_MAX_EVENT", "SSEDecoder", "SSEEvent", "encode_event"]

DEFAULT_MAX_EVENT: Final = 4 * 1024 * 1024
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event; `id` is the stream's last event id at dispatch (it persists across events)."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def _single_line(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(f"an SSE {name} cannot contain a line break")
    return value


def encode_event(
    data: bytes, *, event_id: str | None = None, event: str | None = None, retry_ms: int | None = None
) -> bytes:
    """One event, terminated by a blank line; each line of `data` becomes its own `data:` field."""
    head = []
    if event_id is not None:
        if "\0" in event_id:
            raise ValueError("an SSE id cannot contain NUL")
        head.append(f"id: {_single_line('id', event_id)}\n")
    if event is not None:
        head.append(f"event: {_single_line('event', event)}\n")
    if retry_ms is not None:
        if retry_ms < 0:
            raise ValueError("retry must be a non-negative number of milliseconds")
        head.append(f"retry: {retry_ms}\n")
    if b"\n" in data or b"\r" in data:
        lines = b"".join(b"data: " + line + b"\n" for line in _LINE_BREAK.split(data))
    else:  # one line, as every JSON-RPC message encoded here is
        lines = b"data: " + data + b"\n"
    return "".join(head).encode() + lines + b"\n"


class SSEDecoder:
    """Feed bytes as they arrive; get back every event completed so far.

    An event whose data, or a line, grows past `max_event` bytes raises ValueError: the stream is
    then unusable, because the rest of that event cannot be told apart from the next.
    """

    def __init__(self, max_event: int = DEFAULT_MAX_EVENT) -> None:
        self.max_event = max_event
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self.dispatched = 0  # events with data so far
        self._partial = bytearray()  # the unterminated line so far; only new bytes are searched
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._skip_lf = False  # the previous chunk ended in CR, which may be half of a CRLF
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events `chunk` completes. Each byte is searched for a line end once, so an
        unterminated line costs time linear in its length, and at most `max_event` bytes of it are held."""
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        if not self._started:
            chunk = self._strip_bom(chunk)
        events: list[SSEEvent] = []
        start = 0
        for match in _LINE_BREAK.finditer(chunk):
            if match.group() == b"\r" and match.end() == len(chunk):
                self._skip_lf = True
            event = self._line(self._take(chunk, start, match.start()))
            if event is not None:
                events.append(event)
            start = match.end()
        self._partial += memoryview(chunk)[start:]
        if len(self._partial) + self._size > self.max_event:
            raise ValueError(f"SSE event exceeds {self.max_event} bytes")
        return events

    def _strip_bom(self, chunk: bytes) -> bytes:
        """Drop a leading UTF-8 BOM, which may arrive split over chunks; held bytes come back prefixed."""
        buffer = bytes(self._partial) + chunk
        self._partial.clear()
        if len(buffer) < 3 and b"\xef\xbb\xbf".startswith(buffer):
            self._partial += buffer
            return b""
        self._started = True
        return buffer.removeprefix(b"\xef\xbb\xbf")

    def _take(self, chunk: bytes, start: int, end: int) -> str:
        """One whole line: the held partial line plus chunk[start:end], decoded."""
        if len(self._partial) + end - start + self._size > self.max_event:
            raise ValueError(f"SSE event exceeds {self.max_event} bytes")
        if not self._partial:
            return chunk[start:end].decode("utf-8", "replace")
        self._partial += memoryview(chunk)[start:end]
        line = self._partial.decode("utf-8", "replace")
        self._partial.clear()
        return line

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._size += len(value) + 1
            if self._size > self.max_event:
                raise ValueError(f"SSE event exceeds {self.max_event} bytes")
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event or "message"
        self._data = []
        self._size = 0
        self._event = ""
        if not data:
            return None
        self.dispatched += 1
        return SSEEvent("\n".join(data), event, self.last_event_id, self.retry)
