"""Registration takes explicit objects with thin sugar: `add_tool` / `add_resource` / `add_prompt` accept a
Tool, Resource, ResourceTemplate or Prompt built by its own constructor, and make one from a function (with
the server's context and lifespan types) when given a function and its options."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from mcpkit import Context, Server
from mcpkit.server.prompts import Prompt
from mcpkit.server.resources import resource_from
from mcpkit.server.tools import Tool
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio


class Stockroom:
    def count(self, sku: str) -> int:
        return len(sku)


@asynccontextmanager
async def stockroom(server: Server) -> AsyncIterator[Stockroom]:
    yield Stockroom()


async def test_a_tool_built_by_from_function_is_served_as_it_was_made() -> None:
    def stock(sku: str, ctx: Context) -> str:
        """How many units are left."""
        return f"{sku} for {ctx.client_info['name']}"

    server = Server("shop")
    made = Tool.from_function(stock, name="units", read_only=True, scopes=["stock:read"])
    assert server.add_tool(made) is made
    async with connect(server) as client:
        (listed,) = await client.list_all_tools()
        result = await client.call_tool("units", {"sku": "TEA"})
    assert (listed["name"], listed["annotations"]) == ("units", {"readOnlyHint": True})
    assert server.scopes_for("tools/call", {"name": "units"}) == frozenset({"stock:read"})
    assert result["content"][0]["text"] == "TEA for mcpkit"


async def test_a_tool_made_outside_the_server_takes_the_lifespan_value_when_given_its_type() -> None:
    def stock(sku: str, room: Stockroom) -> int:
        return room.count(sku)

    server = Server("shop", lifespan=stockroom)
    server.add_tool(Tool.from_function(stock, lifespan_type=Stockroom))
    async with connect(server) as client:
        (listed,) = await client.list_all_tools()
        result = await client.call_tool("stock", {"sku": "COFFEE"})
    assert list(listed["inputSchema"]["properties"]) == ["sku"]
    assert result["structuredContent"] == {"result": 6}


def test_options_beside_an_item_already_made_are_refused() -> None:
    server = Server("shop")
    tool = Tool.from_function(lambda: "x", name="x")
    with pytest.raises(TypeError, match="title"):
        server.add_tool(tool, title="X")
    with pytest.raises(TypeError):
        server.add_prompt(Prompt.from_function(lambda: "x", name="x"), title="X")
    with pytest.raises(TypeError):
        server.add_resource(resource_from("mem://x", content="x"), mime_type="text/plain")
    assert server.tools == {}


async def test_a_template_and_a_prompt_built_outside_the_server_are_served() -> None:
    def note(id: int, ctx: Context) -> str:
        return f"note {id} in {ctx.negotiated.version}"

    def greet(name: str) -> str:
        return f"Hello {name}"

    server = Server("notes")
    template = server.add_resource(resource_from("notes://{id}", note, mime_type="text/plain", scopes=["r"]))
    server.add_prompt(Prompt.from_function(greet, title="Greeting"))
    async with connect(server) as client:
        read = await client.read_resource("notes://7")
        prompt = await client.get_prompt("greet", {"name": "Ann"})
        (listed,) = await client.list_all_prompts()
    assert server.templates == {"notes://{id}": template}
    assert read["contents"][0]["text"].startswith("note 7 in ")
    assert prompt["messages"][0]["content"]["text"] == "Hello Ann"
    assert listed["title"] == "Greeting"
    assert server.scopes_for("resources/read", {"uri": "notes://7"}) == frozenset({"r"})
