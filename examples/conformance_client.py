"""A client for the official MCP conformance suite's client scenarios.

The suite's harness runs `python conformance_client.py <server-url>` with MCP_CONFORMANCE_SCENARIO
naming the scenario (and maybe MCP_CONFORMANCE_PROTOCOL_VERSION, MCP_CONFORMANCE_CONTEXT as JSON).
Each scenario is a few calls through mcpkit's public client API; the mock server scores them.
A handshake-era version pins initialize at it; 2026-07-28 (or none) lets the client probe with
server/discover and fall back by the spec's rules.
Exit status 0 when the scenario's calls went through, 1 (with the error on stderr) otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import orjson
from conformance_auth import oauth_client

from mcpkit.client import Client, connect_http
from mcpkit.client.skills import Skills
from mcpkit.protocol.versions import is_stateless

JSON = dict[str, Any]
Scenario = Callable[[Client, JSON], Awaitable[None]]


def accept_with_defaults(params: JSON) -> JSON:
    """Accept a form elicitation, answering each field with the schema's default (SEP-1034)."""
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {name: field["default"] for name, field in properties.items() if "default" in field}
    return {"action": "accept", "content": content}


async def initialize(client: Client, context: JSON) -> None:
    if "tools" in client.server_capabilities:
        await client.list_tools()


async def tools_call(client: Client, context: JSON) -> None:
    tools = await client.list_all_tools()
    for tool in tools:
        if tool["name"] == "add_numbers":
            await client.call_tool("add_numbers", {"a": 5, "b": 3})


async def call_every_tool(client: Client, context: JSON) -> None:
    for tool in await client.list_all_tools():
        await client.call_tool(tool["name"], {})


async def call_named_tools(client: Client, context: JSON) -> None:
    """The tool calls the scenario's context names, after listing (which teaches the headers)."""
    await client.list_all_tools()
    for call in context.get("toolCalls", []):
        await client.call_tool(call["name"], call.get("arguments") or {})


async def use_everything(client: Client, context: JSON) -> None:
    """One request of each kind that carries Mcp-Method and Mcp-Name."""
    await call_every_tool(client, context)
    for resource in await client.list_all_resources():
        await client.read_resource(resource["uri"])
    for prompt in await client.list_all_prompts():
        await client.get_prompt(prompt["name"])


async def echo_focal_schema(client: Client, context: JSON) -> None:
    """Hand the focal tool's inputSchema back to the echo tool exactly as listed (SEP-1613, SEP-2106)."""
    tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    focal = tools.get("json_schema_2020_12_tool")
    if focal is not None and "json_schema_echo" in tools:
        await client.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})


async def list_skills(client: Client, context: JSON) -> None:
    """A host building its registry: entries only, no file fetched ahead of need (SEP-2640)."""
    await Skills(client).list()


async def load_skill(client: Client, context: JSON) -> None:
    """Load the first skill, then read its other files: every read verified against the entry, so a
    tampered SKILL.md raises before any supporting file is read."""
    skills = Skills(client)
    for entry in (await skills.list())[:1]:
        await skills.load(entry)
        for resource in entry["resources"][1:] if isinstance(entry["resources"], list) else []:
            await skills.read(entry, resource["uri"])


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": call_every_tool,
    "sse-retry": call_every_tool,
    "sep-2322-client-request-state": call_every_tool,
    "http-standard-headers": use_everything,
    "http-custom-headers": call_named_tools,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-2020-12-preservation": echo_focal_schema,
    "sep-2640-client-no-prefetch": list_skills,
    "sep-2640-client-verify-digest": load_skill,
    "sep-2640-client-verify-size": load_skill,
    "sep-2640-client-verify-frontmatter": load_skill,
}


async def list_and_call(client: Client, context: JSON) -> None:
    """An authorized session's work: list the tools, call the first (a step-up may happen there)."""
    tools = await client.list_all_tools()
    if tools:
        await client.call_tool(tools[0]["name"], {})


async def run(url: str, scenario: str) -> None:
    steps = SCENARIOS.get(scenario, list_and_call if scenario.startswith("auth/") else initialize)
    context = orjson.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    options: JSON = {"name": "mcpkit-conformance-client", "elicitation": accept_with_defaults}
    if scenario.startswith("auth/"):
        options["auth"] = oauth_client(url, scenario, context)
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    if version and not is_stateless(version):
        options["protocol_version"] = version  # pins the handshake era at the suite's version
    else:
        options["era"] = "auto"  # probe with server/discover; a mock's `{}` answer means legacy
    async with connect_http(url, **options) as client:
        await steps(client, context)


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
