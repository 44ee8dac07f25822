"""Tenants end to end over a real HTTP server (uvicorn), with API keys and mcpkit's own client in both eras:
each tenant's server has a tool of the same name, and roles within a tenant come from a visibility hook
on that tenant's server. A change in one tenant's server reaches its listeners and no other tenant's."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from tenancy_world import Principal, protected

import peers
from mcpkit import Server
from mcpkit.auth import AccessToken
from mcpkit.client import connect_http
from mcpkit.protocol.errors import MCPError
from mcpkit.transports.http_server import Tenants

pytestmark = pytest.mark.anyio

ANN = Principal("ann", "acme", frozenset({"admin"}))
AMY = Principal("amy", "acme", frozenset())
BOB = Principal("bob", "globex", frozenset({"admin"}))
ERAS = ["handshake", "modern"]


def admins_only(auth: AccessToken | None, _kind: str, item: Any) -> bool:
    return not (item.meta or {}).get("admin") or "admin" in (auth.claims.get("roles", ()) if auth else ())


class Books:
    """One server per tenant, kept so the test can change one of them."""

    def __init__(self) -> None:
        self.servers: dict[str, Server] = {}

    def build(self, tenant: str) -> Server:
        server = Server(f"books-{tenant}", visible=admins_only)
        server.add_tool(lambda: f"{tenant}'s report", name="report")
        server.add_tool(lambda: f"{tenant}'s books closed", name="close", meta={"admin": True})
        server.add_resource("note://last", lambda: f"{tenant}'s last note")
        self.servers[tenant] = server
        return server


@pytest.mark.parametrize("era", ERAS)
async def test_each_tenant_gets_its_own_tools_and_its_roles_within_it(era: str) -> None:
    books = Books()
    async with peers.serving(protected(Tenants(books.build), [ANN, AMY, BOB])) as url:
        seen = {}
        for who in (ANN, AMY, BOB):
            headers = {"authorization": f"Bearer {who.token}"}
            async with connect_http(url, headers=headers, era=era, timeout=10) as client:
                tools = sorted(t["name"] for t in await client.list_all_tools())
                report = (await client.call_tool("report", {}))["content"][0]["text"]
                try:
                    closed = (await client.call_tool("close", {}))["content"][0]["text"]
                except MCPError as refused:
                    closed = refused.message
                seen[who.subject] = (tools, report, closed)
    assert seen == {
        "ann": (["close", "report"], "acme's report", "acme's books closed"),
        "amy": (["report"], "acme's report", "Unknown tool: 'close'"),
        "bob": (["close", "report"], "globex's report", "globex's books closed"),
    }
    assert sorted(books.servers) == ["acme", "globex"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_change_in_one_tenant_reaches_its_listeners_and_no_other_tenants(era: str) -> None:
    books = Books()
    async with peers.serving(protected(Tenants(books.build), [ANN, BOB])) as url:
        acme_headers = {"authorization": f"Bearer {ANN.token}"}
        globex_headers = {"authorization": f"Bearer {BOB.token}"}
        async with (
            connect_http(url, headers=acme_headers, era=era, timeout=10) as acme,
            connect_http(url, headers=globex_headers, era=era, timeout=10) as globex,
        ):
            await acme.list_tools()
            await globex.list_tools()
            async with (
                acme.listen(tools=True, uris=["note://last"]) as acme_hears,
                globex.listen(tools=True, uris=["note://last"]) as globex_hears,
            ):
                books.servers["acme"].add_tool(lambda: "new", name="audit")
                await books.servers["acme"].notify_resource_updated("note://last")
                with anyio.fail_after(10):
                    acme_heard = [await anext(acme_hears), await anext(acme_hears)]
                    # globex's own last word, once acme has heard both of its own
                    await books.servers["globex"].notify_resource_updated("note://last")
                    globex_heard = await anext(globex_hears)
    assert sorted(method for method, _ in acme_heard) == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]
    assert globex_heard[0] == "notifications/resources/updated"  # not acme's list_changed before it
