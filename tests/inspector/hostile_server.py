"""A server whose every string is HTML and script, and a tool that runs as a task (inspector tests)."""

from __future__ import annotations

import anyio

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


if __name__ == "__main__":
    server.run()
