"""A stdio server whose tools print to stdout and start child processes, for the stdio tests."""

from __future__ import annotations

import os
import subprocess
import sys

import anyio

from mcpkit import Context, Server

server = Server("noisy")


@server.tool()
def shout(text: str) -> str:
    print("stray print from a tool")
    subprocess.run(["echo", "stray output from a child"], check=True)
    return text.upper()


@server.tool()
async def nap(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "rested"


@server.tool()
async def count_roots(ctx: Context) -> str:
    try:
        return str(len(await ctx.list_roots()))
    except Exception as exc:
        return f"failed: {exc}"


if __name__ == "__main__":
    max_line = int(sys.argv[1]) if len(sys.argv) > 1 else None
    grace = os.environ.get("NOISY_EOF_GRACE")
    server.run(max_line=max_line, eof_grace=float(grace) if grace else None)
