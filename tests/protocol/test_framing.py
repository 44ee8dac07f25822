"""stdio line framing (transports "stdio"): pure, no I/O."""

from __future__ import annotations

from mcpkit.protocol.framing import LineReader, Oversized


def test_a_line_split_over_chunks_comes_back_whole_and_the_reader_starts_afresh() -> None:
    reader = LineReader()
    assert reader.feed(b'{"a"') == []
    assert reader.feed(b":1}\r\n{") == [b'{"a":1}']
    assert reader.feed(b"}\n") == [b"{}"]


def test_blank_and_whitespace_only_lines_are_skipped_and_carriage_returns_dropped() -> None:
    reader = LineReader()
    assert reader.feed(b"\n \t\r\n\r\n{}\r\r\n") == [b"{}"]
    assert reader.feed(b" ") == []
    assert reader.feed(b" \r\n[]\n") == [b"[]"]


def test_a_line_over_the_cap_is_reported_once_and_the_next_line_is_read() -> None:
    reader = LineReader(max_line=4)
    assert reader.feed(b"123") == []
    assert reader.feed(b"4567") == [Oversized(4)]
    assert reader.feed(b"89\n{}\n") == [b"{}"]
