"""stdio framing: one JSON-RPC message per line, with a cap on how long a line may grow.

Spec: transports "stdio": messages are delimited by newlines and MUST NOT contain embedded newlines.
A line longer than the cap is dropped as it streams in (never held whole) and reported once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_MAX_LINE", "LineReader", "Oversized"]

DEFAULT_MAX_LINE: Final = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Oversized:
    limit: int


class LineReader:
    """Split a byte stream into lines of at most `max_line` bytes.

    A line that arrived in one chunk is a slice of it; one gathered over several chunks is the
    bytearray it was gathered in, handed over rather than copied (a 1 MiB line costs 1 MiB, not 2).
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes | bytearray | Oversized]:
        out: list[bytes | bytearray | Oversized] = []
        buffer = self._buffer
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._discarding:
                self._discarding = False
            elif len(buffer) + end - start > self.max_line:
                out.append(Oversized(self.max_line))
            else:
                line: bytes | bytearray
                if buffer:
                    buffer += memoryview(data)[start:end]
                    line, buffer = buffer, bytearray()
                    self._buffer = buffer
                else:
                    line = data[start:end]
                if line.endswith(b"\r"):  # rstrip and strip would copy a bytearray even when unchanged
                    line = line.rstrip(b"\r")
                if line and not line.isspace():
                    out.append(line)
            buffer.clear()
            start = end + 1
        if not self._discarding:
            buffer += memoryview(data)[start:]
            if len(buffer) > self.max_line:
                buffer.clear()
                self._discarding = True
                out.append(Oversized(self.max_line))
        return out
