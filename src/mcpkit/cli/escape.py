"""Text a server sent, made harmless for the terminal the `mcpkit` command prints to.

A server controls tool names, results, log messages and elicitation text; printed raw, an escape sequence
in them can recolour or rewrite the screen, retitle the window, plant text in the clipboard (OSC 52) or
disguise a link (OSC 8). Every C0 control (but newline and tab where text spans lines), DEL and every C1
control is shown as a visible \\xNN instead; with ESC and the C1 introducers gone, no sequence can start.
"""

from __future__ import annotations

__all__ = ["terminal_json", "terminal_line", "terminal_text"]

_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
_BLOCK = {c: f"\\x{c:02x}" for c in _CONTROLS if chr(c) not in "\n\t"}
_LINE = {c: f"\\x{c:02x}" for c in _CONTROLS}
# JSON text from orjson already escapes C0 (RFC 8259 §7) but leaves DEL and C1 raw; \u escapes keep the
# document equal to the one encoded.
_JSON = {c: f"\\u{c:04x}" for c in _CONTROLS if c >= 0x7F}


def terminal_text(text: object) -> str:
    """`text` with every control shown escaped, except the newlines and tabs of its layout."""
    return str(text).translate(_BLOCK)


def terminal_line(text: object) -> str:
    """`text` as one line: every control shown escaped, newlines and carriage returns too."""
    return str(text).translate(_LINE)


def terminal_json(encoded: str) -> str:
    """JSON text from orjson with DEL and C1 controls written as \\u escapes (the same JSON value)."""
    return encoded.translate(_JSON)
