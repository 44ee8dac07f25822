"""What two `mcpkit serve --workers 2 --redis URL` runs serve in tests/cluster/test_cluster_machines.py."""

from __future__ import annotations

from mcpkit import Context, Server

server = Server("machines")


@server.tool()
async def ask(ctx: Context) -> str:
    """One question: a 2026-07-28 input-required round, or a handshake-era elicitation request."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    answer = await ctx.elicit("name?", schema, key="who")
    return f"hi {(answer.content or {}).get('name')}"
