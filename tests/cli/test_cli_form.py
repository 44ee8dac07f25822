"""The terminal elicitation form, driven in a pty with pexpect as a person would: numbered choices,
limits, patterns, formats, defaults on Enter, strict booleans, a multi-select; each wrong answer refused
at once with its reason and asked again; Ctrl-C at a prompt cancels the form at once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import orjson
import pexpect

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = str(Path(__file__).with_name("client_server.py"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def survey() -> pexpect.spawn[str]:
    command = ["-m", "mcpkit.cli", "call", SERVER_FILE, "survey"]
    child = pexpect.spawn(sys.executable, command, env=ENV, encoding="utf-8", timeout=30)
    child.expect_exact("The server asks: Tell us about your booking")
    return child


def answer(child: pexpect.spawn[str], prompt: str, text: str) -> None:
    child.expect_exact(prompt)
    child.sendline(text)


def test_each_answer_is_checked_before_the_form_is_sent() -> None:
    child = survey()
    child.expect_exact("    1) small  2) medium  3) large")
    answer(child, "  Size: ", "7")
    answer(child, "    choose a number from 1 to 3\r\n  Size: ", "2")
    answer(child, "  Guests [1-10, default 2]: ", "200")
    answer(child, "    200 is greater than the maximum of 10\r\n  Guests [1-10, default 2]: ", "")
    answer(child, "  Code: ", "ab")
    answer(child, '    "ab" does not match "^[A-Z]{3}$"\r\n  Code: ', "ABC")
    answer(child, "  Email (optional) [email]: ", "nope")
    answer(child, "    give a valid email\r\n  Email (optional) [email]: ", "ann@example.com")
    answer(child, "  Vegan [y/n]: ", "yse")
    answer(child, "    answer yes or no\r\n  Vegan [y/n]: ", "no")
    child.expect_exact("    1) bread  2) wine  3) cake")
    answer(child, "  Extras (optional) [numbers or values, comma-separated]: ", "1, cake")
    answer(child, "  send this answer? [y/n]: ", "y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    result = orjson.loads(str(child.before).strip().splitlines()[-1])
    assert result == {
        "action": "accept",
        "content": {
            "size": "medium",
            "guests": 2,
            "code": "ABC",
            "email": "ann@example.com",
            "vegan": False,
            "extras": ["bread", "cake"],
        },
    }


def test_ctrl_c_at_a_prompt_cancels_the_form_at_once() -> None:
    child = survey()
    answer(child, "  Size: ", "1")
    child.expect_exact("  Guests [1-10, default 2]: ")
    child.sendintr()  # Ctrl-C, as the terminal sends it
    child.expect_exact("  cancelled")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert orjson.loads(str(child.before).strip().splitlines()[-1]) == {"action": "cancel", "content": None}
