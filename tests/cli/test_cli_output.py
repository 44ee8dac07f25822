"""`mcpkit list` as a table with each tool's parameters (rich, or plain columns without it), and progress
with a total as a bar on a terminal (driven in a pty with pexpect)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = str(Path(__file__).with_name("client_server.py"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "160"}


def mcpkit(*args: str, env: dict[str, str] = ENV) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *args], capture_output=True, text=True, env=env, timeout=60
    )


def _rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.splitlines() if line.strip()]


def test_list_shows_each_tool_with_its_parameters() -> None:
    done = mcpkit("list", SERVER_FILE)
    assert done.returncode == 0, done.stderr
    rows = _rows(done.stdout)
    assert rows[0] == ["tool", "parameter", "type", "required", "description"]
    assert ["forecast", "A", "made-up", "forecast."] in rows
    assert ["city", "string", "yes", "The", "city", "to", "forecast"] in rows
    assert ["days", "integer", "no", "How", "many", "days", "ahead", "(default", "3)"] in rows
    assert ["tags", "string[]", "|", "null", "no", "(default", "null)"] in rows


def test_list_prompts_shows_their_arguments() -> None:
    done = mcpkit("list", str(ROOT / "examples" / "everything.py"), "prompts")
    rows = _rows(done.stdout)
    assert rows[0] == ["prompt", "argument", "required", "description"]
    assert ["name", "yes", "Who", "to", "greet"] in rows and ["style", "no"] in rows


def test_without_rich_the_table_is_plain_columns(tmp_path: Path) -> None:
    blocked = tmp_path / "rich"  # as if the cli extra were not installed
    blocked.mkdir()
    (blocked / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'rich'\", name='rich')\n"
    )
    env = {**ENV, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ENV['PYTHONPATH']}"}
    lines = mcpkit("list", SERVER_FILE, env=env).stdout.splitlines()
    assert lines[0].split() == ["tool", "parameter", "type", "required", "description"]
    assert "           city       string           yes       The city to forecast" in lines
    assert "forecast                                         A made-up forecast." in lines


def test_progress_with_a_total_is_a_bar_on_a_terminal() -> None:
    command = [sys.executable, "-m", "mcpkit.cli", "call", SERVER_FILE, "count", "n=7"]
    child = pexpect.spawn(command[0], command[1:], env=ENV, encoding="utf-8", timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    screen = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", str(child.before))  # the bar's colours and cursor moves
    assert child.exitstatus == 0
    final = screen.split("\r")[-3]  # the bar's last drawing, before the result's line
    assert final.startswith("━" * 40 + " 7/7 ") and final.endswith(" step 7")
    assert screen.endswith("counted 7\r\n") and "[7/7]" not in screen  # no counter line on a terminal
