"""Per-item scopes (`@server.tool(scopes=[...])` and the like) on a protected server, with tokens from the
real authorization server (npm oidc-provider): a caller whose token lacks an item's scopes does not see it
listed, and naming it is refused as HTTP 403 insufficient_scope with the scopes to step up to
(basic/authorization "Runtime Insufficient Scope Errors"), in both eras."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import orjson
import pytest
from auth_server import RESOURCE, AuthServer, authorization_server, protected

from conftest import requirement
from mcpkit import Server
from mcpkit.transports.http_server import StreamableHTTPApp
from raw_caller import RawCaller, answer_of

pytestmark = pytest.mark.anyio

READER = "mcp:tools"
WRITER = "mcp:tools commerce:write"


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


def shop() -> Server:
    server = Server("shop")

    @server.tool()
    def stock(sku: str) -> str:
        return "3"

    @server.tool(scopes=["commerce:write"])
    def restock(sku: str, count: int) -> str:
        return f"{sku}+{count}"

    @server.resource("ledger://all", scopes=["commerce:write"])
    def ledger() -> str:
        return "all the money"

    @server.resource("price://{sku}", scopes=["commerce:write"])
    def price(sku: str) -> str:
        return f"{sku}: 9.99"

    @server.prompt(scopes=["commerce:write"])
    def reprice(sku: str) -> str:
        return f"reprice {sku}"

    return server


class Caller(RawCaller):
    """A raw HTTP caller of the protected server, in one era, with one token."""

    def __init__(self, http: httpx.AsyncClient, token: str, modern: bool) -> None:
        super().__init__(http, token, modern, RESOURCE)


def names(result: dict[str, Any], kind: str, key: str = "name") -> list[str]:
    return sorted(item[key] for item in result[kind])


FORBIDDEN: list[tuple[str, dict[str, Any]]] = [
    ("tools/call", {"name": "restock", "arguments": {"sku": "a", "count": 1}}),
    ("resources/read", {"uri": "ledger://all"}),
    ("resources/read", {"uri": "price://a"}),
    ("prompts/get", {"name": "reprice", "arguments": {"sku": "a"}}),
]


@requirement("auth-server-insufficient-scope")
@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_a_token_without_an_items_scope_neither_sees_nor_uses_it(
    provider: AuthServer, modern: bool
) -> None:
    reader_token = await provider.token(scope=READER)
    async with protected(provider, StreamableHTTPApp(shop())), httpx.AsyncClient() as http:
        reader = Caller(http, reader_token, modern)
        await reader.open()
        tools = names(await reader.result("tools/list", {}), "tools")
        resources = names(await reader.result("resources/list", {}), "resources", "uri")
        templates = await reader.result("resources/templates/list", {})
        prompts = await reader.result("prompts/list", {})
        refused = [await reader.send(method, params) for method, params in FORBIDDEN]
        allowed = await reader.result("tools/call", {"name": "stock", "arguments": {"sku": "a"}})
    assert tools == ["stock"]
    assert resources == [] and templates["resourceTemplates"] == [] and prompts["prompts"] == []
    for response in refused:
        assert response.status_code == 403, response.text
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert 'error="insufficient_scope"' in challenge
        # the scopes to ask for: the item's, and what the token already has that this resource knows
        assert 'scope="commerce:write mcp:tools"' in challenge
        assert "resource_metadata=" in challenge
        assert response.json()["error"] == "insufficient_scope"
    assert allowed["content"][0]["text"] == "3"


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_a_token_with_the_scope_sees_and_uses_everything(provider: AuthServer, modern: bool) -> None:
    writer_token = await provider.token(scope=WRITER)
    async with protected(provider, StreamableHTTPApp(shop())), httpx.AsyncClient() as http:
        writer = Caller(http, writer_token, modern)
        await writer.open()
        tools = names(await writer.result("tools/list", {}), "tools")
        prompts = names(await writer.result("prompts/list", {}), "prompts")
        templates = names(
            await writer.result("resources/templates/list", {}), "resourceTemplates", "uriTemplate"
        )
        called = await writer.result("tools/call", FORBIDDEN[0][1])
        read = await writer.result("resources/read", {"uri": "price://a"})
        got = await writer.result("prompts/get", FORBIDDEN[3][1])
    assert tools == ["restock", "stock"] and prompts == ["reprice"] and templates == ["price://{sku}"]
    assert called["content"][0]["text"] == "a+1"
    assert read["contents"][0]["text"] == "a: 9.99"
    assert got["messages"][0]["content"]["text"] == "reprice a"


def hiding_shop() -> Server:
    """shop() with a visibility hook that hides one more scoped tool, `vault`, from every caller."""
    server = shop()
    server.add_tool(lambda: "gold", name="vault", scopes=["commerce:write"])
    server.visibility(lambda _auth, kind, item: not (kind == "tools" and item.name == "vault"))
    return server


async def refusals(provider: AuthServer, server: Server, modern: bool) -> list[tuple[int, str, Any]]:
    """How the FORBIDDEN requests of a reader, then `vault` and a tool nobody has, are answered."""
    reader_token = await provider.token(scope=READER)
    named = [*FORBIDDEN, ("tools/call", {"name": "vault", "arguments": {}})]
    named.append(("tools/call", {"name": "nothing", "arguments": {}}))
    async with protected(provider, StreamableHTTPApp(server)), httpx.AsyncClient() as http:
        reader = Caller(http, reader_token, modern)
        await reader.open()
        answers = [await reader.send(method, params) for method, params in named]
    return [(a.status_code, a.headers.get("www-authenticate", ""), answer_of(a)) for a in answers]


@requirement("auth-server-insufficient-scope")
@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_with_a_visibility_hook_a_visible_item_without_its_scope_is_the_same_403_challenge(
    provider: AuthServer, modern: bool
) -> None:
    without_hook = await refusals(provider, shop(), modern)
    with_hook = await refusals(provider, hiding_shop(), modern)
    assert with_hook[:4] == without_hook[:4]
    for status, challenge, body in with_hook[:4]:
        assert status == 403 and 'error="insufficient_scope"' in challenge
        assert 'scope="commerce:write mcp:tools"' in challenge and body["error"] == "insufficient_scope"
    # hidden is unknown, word for word: no 403, nothing that names its scopes
    (hidden_status, hidden_challenge, hidden), (unknown_status, _, unknown) = with_hook[4:]
    assert hidden_status == unknown_status and hidden_challenge == ""
    assert hidden["error"] == {"code": -32602, "message": "Unknown tool: 'vault'"}
    assert unknown["error"] == {"code": -32602, "message": "Unknown tool: 'nothing'"}


async def test_a_listen_naming_a_scoped_resource_is_refused_without_its_scope(provider: AuthServer) -> None:
    """Issue 31 item 24: its acknowledgement would name the resources and its updates follow them."""
    reader_token, writer_token = await provider.token(scope=READER), await provider.token(scope=WRITER)
    listen = {"notifications": {"resourceSubscriptions": ["price://a"]}}
    async with protected(provider, StreamableHTTPApp(shop())), httpx.AsyncClient() as http:
        reader = Caller(http, reader_token, modern=True)
        await reader.open()
        refused = await reader.send("subscriptions/listen", listen)
        writer = Caller(http, writer_token, modern=True)
        await writer.open()
        with anyio.fail_after(10):
            async with writer.stream("subscriptions/listen", listen) as allowed:
                first = await anext(allowed.aiter_lines())
    assert refused.status_code == 403 and "price://a" not in refused.text
    assert 'scope="commerce:write mcp:tools"' in refused.headers["www-authenticate"]
    assert allowed.status_code == 200 and first


async def test_a_target_that_names_no_scopes_is_still_refused_by_the_handler(provider: AuthServer) -> None:
    # `server.serve` hides the Server from the HTTP app, so the request reaches the handler, which checks too
    reader_token = await provider.token(scope=READER)
    async with protected(provider, StreamableHTTPApp(shop().serve)), httpx.AsyncClient() as http:
        reader = Caller(http, reader_token, modern=False)
        await reader.open()
        response = await reader.send(*FORBIDDEN[0])
    error = answer_of(response)["error"]
    assert error["code"] == -32602
    assert "commerce:write" in error["message"]
    assert error["data"] == {"error": "insufficient_scope", "scope": "commerce:write"}


def test_scoped_list_pages_are_cached_apart_per_held_scopes() -> None:
    server = Server("cache")
    server.add_tool(lambda: 1, name="open_tool")
    server.add_tool(lambda: 2, name="admin_tool", scopes=["admin"])
    registry = server.registry
    everyone = registry.listing("tools", "2025-11-25", None)
    admin = registry.listing("tools", "2025-11-25", None, frozenset({"admin", "x"}))
    guest = registry.listing("tools", "2025-11-25", None, frozenset({"x"}))
    guest_again = registry.listing("tools", "2025-11-25", None, frozenset({"y"}))

    def listed(result: dict[str, Any]) -> list[str]:
        return [tool["name"] for tool in orjson.loads(orjson.dumps(result))["tools"]]

    assert listed(everyone) == listed(admin) == ["open_tool", "admin_tool"]
    assert listed(guest) == ["open_tool"]
    assert guest_again is guest  # the same scopes held of this list's: the same cached page
    assert registry.cached_pages == 2
