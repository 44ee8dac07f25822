"""For the inspector's tests: a server whose every string is HTML and script, a tool that runs as a task, one
with a schema of every shape the page's forms handle, and one that makes the server exit."""

from __future__ import annotations

import os
import sys
from typing import Literal

import anyio
from pydantic import BaseModel, Field

from mcpkit import Context, Server

MARK = "<img src=x onerror=\"window.pwned='img'\"><script>window.pwned='script'</script><b>bold</b>"
server = Server("hostile" + MARK, "1.0", instructions=MARK)


@server.tool(name="evil" + MARK, description=MARK)
async def evil(text: str, ctx: Context) -> str:
    await ctx.log("warning", MARK, logger="evil" + MARK)
    await ctx.report_progress(1, 2, MARK)
    return MARK + text


@server.tool(task=True)
async def long_job(seconds: float) -> str:
    """Sleeps `seconds`, then says so: long enough to poll and cancel as a task."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


class Point(BaseModel):
    x: int
    y: int = Field(default=0, description="defaults to 0")


@server.tool()
def configure(
    name: str,
    mode: Literal["fast", "safe"],
    ratio: float,
    tags: list[str],
    origin: Point,
    points: list[Point] | None = None,
    verbose: bool = False,
    limit: int | None = None,
) -> dict[str, object]:
    """Every shape of argument: the arguments come back as they arrived."""
    return {
        "name": name,
        "mode": mode,
        "ratio": ratio,
        "tags": tags,
        "origin": origin.model_dump(),
        "points": None if points is None else [p.model_dump() for p in points],
        "verbose": verbose,
        "limit": limit,
    }


@server.tool()
def exit_now() -> str:
    """The server process ends at once, without answering."""
    os._exit(3)


if __name__ == "__main__":
    note = os.environ.get("HOSTILE_NOTE")
    print("hostile server: starting" + (f" ({note})" if note else ""), file=sys.stderr, flush=True)
    server.run()
