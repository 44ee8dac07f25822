"""One table of exit codes, in `mcpkit --help` (issue 31, item 16), and key=value words on either side of
options (item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
SERVER = f"{sys.executable} {ROOT / 'examples' / 'everything.py'}"


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args], capture_output=True, text=True, env=ENV, timeout=60
    )


def test_help_ends_with_the_table_of_exit_codes() -> None:
    shown = mcpkit("--help").stdout
    table = shown[shown.index("exit codes:") :].splitlines()
    assert [line.split()[0] for line in table[1:]] == ["0", "1", "2", "3", "4", "130", "141"]
    assert table[3] == (
        "  2    usage: a bad option or argument; a tool, prompt, resource or task the server does not have"
    )


def test_an_unknown_prompt_exits_2_like_an_unknown_tool() -> None:
    prompt = mcpkit("prompt", SERVER, "gret")
    assert (prompt.returncode, prompt.stderr) == (2, "mcpkit: unknown prompt 'gret' (did you mean greet?)\n")
    tool = mcpkit("call", SERVER, "ad")
    assert (tool.returncode, tool.stderr) == (2, "mcpkit: unknown tool 'ad' (did you mean add?)\n")


def test_an_unknown_resource_exits_2() -> None:
    done = mcpkit("read", SERVER, "demo://missing")
    assert (done.returncode, done.stderr) == (
        2,
        "mcpkit: no resource 'demo://missing' (error -32602: Resource not found: demo://missing)\n",
    )


def test_options_may_come_between_key_value_arguments() -> None:
    done = mcpkit("call", SERVER, "add", "a=2", "--json", "b=40")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["structuredContent"] == {"result": 42}
    prompt = mcpkit("prompt", SERVER, "greet", "--json", "name=Ann", "style=pirate")
    assert prompt.returncode == 0 and "pirate greeting for Ann" in prompt.stdout


def test_an_unknown_option_is_still_refused() -> None:
    done = mcpkit("call", SERVER, "add", "a=2", "--bogus", "b=40")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "mcpkit: error: unrecognized arguments: --bogus b=40"
