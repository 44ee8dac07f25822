"""SSE framing (WHATWG "Server-sent events", interpreting an event stream): pure, no I/O."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import pytest

from mcpkit.protocol import sse
from mcpkit.protocol.sse import SSEDecoder, SSEEvent, encode_event


def test_an_encoded_event_carries_id_event_retry_and_data_then_a_blank_line() -> None:
    raw = encode_event(b'{"a":1}', event_id="7", event="message", retry_ms=1500)
    assert raw == b'id: 7\nevent: message\nretry: 1500\ndata: {"a":1}\n\n'


def test_multi_line_data_becomes_one_data_field_per_line_and_decodes_back() -> None:
    raw = encode_event(b"one\ntwo\r\nthree")
    assert raw == b"data: one\ndata: two\ndata: three\n\n"
    assert SSEDecoder().feed(raw) == [SSEEvent("one\ntwo\nthree")]


def test_an_id_or_event_with_a_line_break_is_refused() -> None:
    with pytest.raises(ValueError):
        encode_event(b"x", event_id="a\nb")
    with pytest.raises(ValueError):
        encode_event(b"x", event="a\rb")


def test_the_decoder_accepts_crlf_lf_and_cr_line_endings() -> None:
    for sep in (b"\r\n", b"\n", b"\r"):
        raw = b"id: 1" + sep + b"data: x" + sep + sep
        assert SSEDecoder().feed(raw) == [SSEEvent("x", id="1")]


def test_events_split_across_chunks_at_any_byte_still_decode() -> None:
    raw = encode_event(b"hello", event_id="1") + encode_event(b"world", event_id="2", event="note")
    raw = raw.replace(b"\n", b"\r\n")
    for size in (1, 2, 3, 5):
        decoder = SSEDecoder()
        events = [e for i in range(0, len(raw), size) for e in decoder.feed(raw[i : i + size])]
        assert events == [SSEEvent("hello", id="1"), SSEEvent("world", "note", "2")]


def test_comments_are_ignored_and_an_event_without_data_is_not_dispatched() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b": keep-alive\n\n") == []
    assert decoder.feed(b"event: x\n\n") == []
    assert decoder.feed(b"data\n\n") == [SSEEvent("")]


def test_the_last_event_id_persists_and_retry_needs_digits() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"id: 5\nretry: 300\ndata: a\n\nretry: soon\ndata: b\n\n")
    assert events == [SSEEvent("a", id="5", retry=300), SSEEvent("b", id="5", retry=300)]
    assert decoder.feed(b"id: bad\0\ndata: c\n\n") == [SSEEvent("c", id="5", retry=300)]


def test_one_space_after_the_colon_is_stripped_and_a_leading_bom_ignored() -> None:
    assert SSEDecoder().feed(b"\xef\xbb\xbfdata:  two spaces\n\n") == [SSEEvent(" two spaces")]
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef\xbb") == []
    assert decoder.feed(b"\xbfdata:x\n\n") == [SSEEvent("x")]


def test_an_event_larger_than_the_limit_raises_value_error() -> None:
    decoder = SSEDecoder(max_event=10)
    with pytest.raises(ValueError):
        decoder.feed(b"data: 123456\ndata: 123456\n")
    with pytest.raises(ValueError):
        SSEDecoder(max_event=10).feed(b"data: " + b"x" * 20)


class _ScanCounter:
    """Stands in for the decoder's line-break pattern and adds up how many bytes it was asked to search."""

    def __init__(self, pattern: re.Pattern[bytes]) -> None:
        self.pattern = pattern
        self.scanned = 0

    def finditer(self, string: bytes, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[bytes]]:
        self.scanned += min(len(string), endpos) - pos
        return self.pattern.finditer(string, pos, endpos)

    def search(self, string: bytes, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[bytes] | None:
        self.scanned += min(len(string), endpos) - pos
        return self.pattern.search(string, pos, endpos)


def test_an_unterminated_line_fed_in_small_chunks_is_searched_once_per_byte(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counter = _ScanCounter(sse._LINE_BREAK)
    monkeypatch.setattr(sse, "_LINE_BREAK", counter)
    size, piece = 8 * 1024 * 1024, b"x" * 1024
    decoder = SSEDecoder(max_event=2 * size)
    decoder.feed(b"data: ")
    for _ in range(size // len(piece)):
        assert decoder.feed(piece) == []
    assert decoder.feed(b"\n\n") == [SSEEvent("x" * size)]
    assert counter.scanned <= size + 16  # linear: every byte searched once, not the whole line per chunk


def test_an_unterminated_line_past_the_limit_raises_before_it_is_held_whole() -> None:
    decoder = SSEDecoder(max_event=64 * 1024)
    with pytest.raises(ValueError, match="exceeds 65536 bytes"):
        for _ in range(1024):
            decoder.feed(b"data: " + b"y" * 1024)


def test_a_complete_line_longer_than_the_limit_raises_even_in_one_chunk() -> None:
    with pytest.raises(ValueError):
        SSEDecoder(max_event=10).feed(b"event: " + b"z" * 20 + b"\n")
