"""Extensions (SEP-2133) on mcpkit's Server and Client, in memory through real JSON bytes, in both
eras: the declaration in capabilities (initialize, server/discover), a method an extension adds, the
-32021 gate for a request that did not declare an extension that requires it, and -32601 / a local
refusal for a method of an extension the server does not declare."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import requirement
from mcpkit import Context, Server
from mcpkit.client.extensions import call_extension, server_extension
from mcpkit.protocol.errors import CapabilityError, RemoteError
from mcpkit.protocol.extensions import extension_rule, valid_identifier
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = ["modern", "handshake"]
SEARCH = "io.example/search"


def build() -> Server:
    server = Server("ext")
    search = server.extension(SEARCH, {"maxResults": 5})

    @search.method("search/run")
    async def run(params: JSON, ctx: Context) -> JSON:
        return {"hits": [params.get("q")], "stateless": ctx.stateless}

    strict = server.extension("io.example/strict", require_client=True)

    @strict.method("strict/echo")
    def echo(params: JSON, ctx: Context) -> JSON:
        return {"echo": params.get("text")}

    return server


@requirement("ext-declare")
@pytest.mark.parametrize("era", ERAS)
async def test_the_server_declares_its_extensions_and_serves_their_methods(era: str) -> None:
    async with connect(build(), era=era) as client:
        assert server_extension(client, SEARCH) == {"maxResults": 5}
        assert client.server_capabilities["extensions"]["io.example/strict"] == {}
        result = await call_extension(client, SEARCH, "search/run", {"q": "mcp"})
        assert result["hits"] == ["mcp"] and result["stateless"] is (era == "modern")


@requirement("ext-missing-32021")
@pytest.mark.parametrize("era", ERAS)
async def test_a_required_extension_the_request_did_not_declare_is_32021(era: str) -> None:
    async with connect(build(), era=era) as client:
        with pytest.raises(RemoteError) as refused:
            await _undeclared(client)
        assert refused.value.code == -32021
        assert refused.value.data == {"requiredCapabilities": {"extensions": {"io.example/strict": {}}}}


async def _undeclared(client: Any) -> JSON:
    """strict/echo sent with the rule known but the extension not declared by this client."""
    client.session.connection.extension_rules["strict/echo"] = extension_rule("io.example/strict")
    result: JSON = await client.request("strict/echo", {"text": "hi"})
    return result


@requirement("ext-per-request")
async def test_2026_07_28_declares_the_extension_per_request() -> None:
    async with connect(build(), era="modern") as client:
        result = await call_extension(client, "io.example/strict", "strict/echo", {"text": "hi"})
        assert result["echo"] == "hi"


async def test_the_initialize_era_declares_it_in_initialize() -> None:
    options: JSON = {"extensions": {"io.example/strict": {}}}
    async with connect(build(), era="handshake", **options) as client:
        result = await call_extension(client, "io.example/strict", "strict/echo", {"text": "hi"})
        assert result["echo"] == "hi"


@requirement("ext-undeclared-method")
@pytest.mark.parametrize("era", ERAS)
async def test_a_method_of_an_undeclared_extension_is_refused(era: str) -> None:
    async with connect(Server("plain"), era=era) as client:
        with pytest.raises(CapabilityError):  # the client does not send it
            await call_extension(client, SEARCH, "search/run", {})


@requirement("ext-identifier")
def test_identifiers_follow_the_meta_key_rules() -> None:
    assert valid_identifier("io.modelcontextprotocol/skills") and valid_identifier("com.example/x-y")
    for bad in ("skills", "/skills", "io..x/y", "io.x/", "-io/y"):
        assert not valid_identifier(bad)
    with pytest.raises(ValueError):
        Server("x").extension("no-prefix")


async def test_discover_lists_the_tasks_extension_beside_the_others() -> None:
    server = build()

    @server.tool(task=True)
    def slow() -> str:
        return "done"

    async with connect(server, era="modern") as client:
        declared = client.server_capabilities["extensions"]
        assert set(declared) == {"io.modelcontextprotocol/tasks", SEARCH, "io.example/strict"}
