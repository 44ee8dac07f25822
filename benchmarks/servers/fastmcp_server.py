"""fastmcp (FastMCP high-level API) benchmark server over stdio: echo, add, BENCH_MANY_TOOLS extras.

Runs with the interpreter of its own venv, benchmarks/.venv-fastmcp (run.py creates it with the pinned
version), since fastmcp pins its own `mcp` release.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # os.path: pathlib costs ~8 ms
from _common import MANY_TOOLS, make_extra_tool
from fastmcp import FastMCP

server = FastMCP("bench-fastmcp")


@server.tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


for _i in range(MANY_TOOLS):
    server.tool(make_extra_tool(_i), name=f"t{_i}")

if __name__ == "__main__":
    server.run("stdio", show_banner=False)
