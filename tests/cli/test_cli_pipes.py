"""The `mcpkit` command's stdout in a pipe (issue 31, items 7 and 15): a reader that stops early ends it
quietly, and tables are not folded at 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
URI = "demo://a/very/long/uri/" + "segment/" * 12 + "end"
LONG = f"""from mcpkit import Server

server = Server("long")


@server.resource("{URI}", description="a resource whose description is long enough to wrap at 80 columns")
def long() -> str:
    return "x"
"""


@pytest.fixture
def long_server(tmp_path: Path) -> str:
    path = tmp_path / "long.py"
    path.write_text(LONG)
    return str(path)


@pytest.mark.parametrize("args", [("ping",), ("list", "resources"), ("list", "resources", "--json")])
def test_a_reader_that_closes_stdout_early_ends_the_command_quietly(
    long_server: str, args: tuple[str, ...]
) -> None:
    command = [sys.executable, "-m", "mcpkit", args[0], long_server, *args[1:]]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # as `| head` does once it has its lines
    assert child.wait(60) == 141
    assert child.stderr.read() == b""


def test_a_piped_table_keeps_each_row_on_one_line(long_server: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "list", long_server, "resources"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    rows = [line for line in done.stdout.splitlines() if URI in line]
    assert len(rows) == 1 and "long enough to wrap at 80 columns" in rows[0]
