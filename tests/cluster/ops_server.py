"""A server for the drain tests: `slow` says it started (a file), then waits for a release file."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from mcpkit import Server

server = Server("ops")


@server.tool()
async def slow() -> str:
    Path(os.environ["OPS_STARTED"]).touch()
    while not Path(os.environ["OPS_RELEASE"]).exists():
        await anyio.sleep(0.05)
    return "finished"
