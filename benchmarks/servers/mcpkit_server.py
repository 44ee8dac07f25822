"""mcpkit benchmark server: echo, add, and BENCH_MANY_TOOLS extra tools t0..tN-1, over stdio.

With BENCH_SYNC=1 echo and add are plain `def` functions (what most users write), otherwise `async def`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))  # os.path: pathlib costs ~8 ms
from _common import MANY_TOOLS, make_extra_tool

from mcpkit import Server

server = Server("bench-mcpkit", "1.0")


if os.environ.get("BENCH_SYNC") == "1":

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

else:

    @server.tool()
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b


for _i in range(MANY_TOOLS):
    server.add_tool(make_extra_tool(_i), name=f"t{_i}")

if __name__ == "__main__":
    server.run()
