"""cli_escape: server text shown with every terminal control visible and inert."""

from __future__ import annotations

import io

import orjson
import pytest

from mcpkit.cli.escape import terminal_json, terminal_line, terminal_text
from mcpkit.cli.prompts import terminal_elicitation

HOSTILE = "\x1b]52;c;cm0=\x07\x1b[31m\x9b1m\x7f\r\x00"


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]


def test_text_keeps_its_newlines_and_tabs_and_shows_every_other_control_escaped() -> None:
    shown = terminal_text("a\tb\n" + HOSTILE)
    assert shown.startswith("a\tb\n") and _raw_controls(shown) == []
    assert shown.endswith("\\x1b]52;c;cm0=\\x07\\x1b[31m\\x9b1m\\x7f\\x0d\\x00")


def test_a_line_shows_newlines_too() -> None:
    assert terminal_line("a\nb\tc") == "a\\x0ab\\x09c"


def test_json_output_escapes_del_and_c1_and_decodes_to_the_same_value() -> None:
    value = {"name": HOSTILE, "text": "caf\u00e9 \u2028"}
    encoded = terminal_json(orjson.dumps(value).decode())
    assert _raw_controls(encoded) == [] and orjson.loads(encoded) == value


@pytest.mark.parametrize("mode", ["url", "form"])
def test_an_elicitation_prompt_shows_the_servers_text_escaped(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    params = {
        "mode": mode,
        "message": "please" + HOSTILE,
        "url": "https://example.com/\x1b]8;;https://evil.example\x1b\\",
        "requestedSchema": {"properties": {"x" + HOSTILE: {"type": "string", "title": "t" + HOSTILE}}},
    }
    terminal_elicitation(io.StringIO("y\ny\n"))(params)
    err = capsys.readouterr().err
    assert "please\\x1b" in err and _raw_controls(err) == []
