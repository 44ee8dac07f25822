"""A client for the official MCP conformance suite's client scenarios.

The suite's harness runs `python conformance_client.py <server-url>` with MCP_CONFORMANCE_SCENARIO
naming the scenario (and maybe MCP_CONFORMANCE_PROTOCOL_VERSION, MCP_CONFORMANCE_CONTEXT as JSON).
Each scenario is a few calls through mcpkit's public client API; the mock server scores them.
Exit status 0 when the scenario's calls went through, 1 (with the error on stderr) otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from mcpkit.client.client import Client, connect_http

JSON = dict[str, Any]
HANDSHAKE_VERSION = "2025-11-25"
Scenario = Callable[[Client], Awaitable[None]]


def accept_with_defaults(params: JSON) -> JSON:
    """Accept a form elicitation, answering each field with the schema's default (SEP-1034)."""
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {name: field["default"] for name, field in properties.items() if "default" in field}
    return {"action": "accept", "content": content}


async def initialize(client: Client) -> None:
    if "tools" in client.server_capabilities:
        await client.list_tools()


async def tools_call(client: Client) -> None:
    tools = await client.list_all_tools()
    for tool in tools:
        if tool["name"] == "add_numbers":
            await client.call_tool("add_numbers", {"a": 5, "b": 3})


async def call_every_tool(client: Client) -> None:
    for tool in await client.list_all_tools():
        await client.call_tool(tool["name"], {})


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": call_every_tool,
    "sse-retry": call_every_tool,
}


async def run(url: str, scenario: str) -> None:
    steps = SCENARIOS.get(scenario, initialize)
    options: JSON = {"name": "mcpkit-conformance-client", "elicitation": accept_with_defaults}
    # The suite's client scenarios are handshake-era ones; naming the version makes the client
    # initialize at once rather than probe first (the mock servers answer any method with `{}`).
    options["protocol_version"] = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or HANDSHAKE_VERSION
    async with connect_http(url, **options) as client:
        await steps(client)


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    try:
        anyio.run(run, sys.argv[1], scenario)
    except Exception as exc:
        print(f"{scenario}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
