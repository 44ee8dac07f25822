"""`--sampling CMD`: the example sampler, plain-text replies, and every way a sampler fails turned into
one clear error: sent to the server in the handshake era (the tool's error names it), ending the call in
the 2026-07-28 era (an input response cannot be an error there). Never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = str(Path(__file__).with_name("client_server.py"))
EVERYTHING = str(ROOT / "examples" / "everything.py")
SAMPLER = str(ROOT / "examples" / "sampler.py")
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
FAILING = f"{sys.executable} -c \"import sys; print('no API key', file=sys.stderr); sys.exit(4)\""
NO_CONTENT = f'{sys.executable} -c "print(\'{{\\"x\\": 1}}\')"'


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


def test_the_example_sampler_answers() -> None:
    done = mcpkit("call", EVERYTHING, "summarize", "topic=tides", "--sampling", f"{SAMPLER} --echo")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: Summarise tides in one line.\n"


def test_plain_text_on_stdout_is_the_reply_even_from_a_command_that_never_reads_stdin() -> None:
    done = mcpkit("call", SERVER_FILE, "ask_model", "--sampling", "echo hello")
    assert (done.returncode, done.stdout) == (0, "hello\n")


@pytest.mark.parametrize(
    ("sampler", "why"),
    [
        (FAILING, "it exited with status 4: no API key"),
        (NO_CONTENT, 'it printed JSON without a content object: {"x": 1}'),
        ("true", "it printed nothing (it must print a JSON result or the reply's text)"),
        ("no-such-sampler", "it could not start ([Errno 2] No such file or directory: 'no-such-sampler')"),
    ],
    ids=["exits-non-zero", "no-content", "prints-nothing", "missing"],
)
def test_a_failing_sampler_is_an_error_the_server_sees(sampler: str, why: str) -> None:
    handshake = mcpkit("call", f"{SERVER_FILE} --handshake", "ask_model", "--sampling", sampler)
    assert handshake.returncode == 1  # the tool failed, saying why
    assert handshake.stdout == f"Tool 'ask_model' failed: the --sampling command failed: {why}\n"
    assert "Traceback" not in handshake.stderr
    modern = mcpkit("call", SERVER_FILE, "ask_model", "--sampling", sampler)
    assert modern.returncode == 3
    assert (
        modern.stderr.strip().splitlines()[-1]
        == f"mcpkit: error -32603: the --sampling command failed: {why}"
    )
    assert "Traceback" not in modern.stderr


def test_the_example_sampler_asks_the_person_at_the_terminal() -> None:
    command = ["-m", "mcpkit.cli", "call", f"{SERVER_FILE} --handshake", "ask_model", "--sampling", SAMPLER]
    child = pexpect.spawn(sys.executable, command, env=ENV, encoding="utf-8", timeout=30)
    child.expect_exact("[user] Say hi.")
    child.expect_exact("Your reply as the model (up to 20 tokens):")
    child.sendline("Hi from a person.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert str(child.before).strip().splitlines()[-1] == "Hi from a person."
