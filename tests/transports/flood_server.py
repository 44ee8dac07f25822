"""A stdio server whose tools produce output far faster than a slow client reads it."""

from __future__ import annotations

from mcpkit import Context, Server

server = Server("flood")


@server.tool()
async def flood(ctx: Context, count: int, size: int) -> str:
    for i in range(count):
        await ctx.report_progress(i, count, "x" * size)
    return "flooded"


@server.tool()
async def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    server.run()
