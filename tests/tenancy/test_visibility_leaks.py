"""Per-principal catalogs (`Server(visible=...)`), checked as a property over generated worlds of tenants,
principals with roles, and items of every kind: what a principal gets from the shared server, in both
eras, is answer for answer what it gets from a server holding only the items it sees. Every list page
and every request naming an item (tools/call, prompts/get, resources/read, resources/subscribe and
unsubscribe, completion/complete) is compared, so a hidden item can be neither seen, nor used, nor
told apart from one that does not exist."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tenancy_world import KINDS, Caller, Item, Principal, World, everything_seen, http_to, protected

from mcpkit import Server
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio

TENANTS = ("acme", "globex", "initech")
ROLES = ("admin", "staff")


def key_for(kind: str, tenant: str | None, role: str | None, n: int) -> str:
    stem = f"{tenant or 'all'}_{role or 'any'}_{n}"
    return {
        "tools": f"{stem}_tool",
        "prompts": f"{stem}_prompt",
        "resources": f"res://{stem}",
        "resourceTemplates": f"tpl://{stem}/{{id}}",
    }[kind]


@st.composite
def worlds(draw: st.DrawFn) -> World:
    tenants = draw(st.lists(st.sampled_from(TENANTS), min_size=2, max_size=3, unique=True))
    principals = []
    for tenant in tenants:
        for n in range(draw(st.integers(1, 2))):
            roles = draw(st.frozensets(st.sampled_from(ROLES)))
            principals.append(Principal(f"{tenant}-user{n}", tenant, roles))
    world = World(principals)
    # every tenant has one item of each kind for all its principals: each view offers every kind
    for tenant in tenants:
        world.items += [Item(kind, key_for(kind, tenant, None, 0), tenant, None) for kind in KINDS]
    extra = st.tuples(
        st.sampled_from(KINDS), st.sampled_from((None, *tenants)), st.sampled_from((None, *ROLES))
    )
    for n, (kind, owner, role) in enumerate(draw(st.lists(extra, max_size=8)), start=1):
        world.items.append(Item(kind, key_for(kind, owner, role, n), owner, role))
    return world


async def answers_of(app: Any, token: str | None, items: list[Item], modern: bool) -> list[dict[str, Any]]:
    async with http_to(app) as client:
        caller = Caller(client(), token, modern)
        await caller.open()
        return await everything_seen(caller, items)


async def check_world(world: World) -> None:
    shared = protected(StreamableHTTPApp(world.server(world.items, visible=True)), world.principals)
    for principal in world.principals:
        own = [item for item in world.items if item.seen_by(principal.access())]
        alone = protected(StreamableHTTPApp(world.server(own, visible=False)), world.principals)
        for modern in (False, True):
            seen = await answers_of(shared, principal.token, world.items, modern)
            expected = await answers_of(alone, principal.token, world.items, modern)
            assert seen == expected, (principal, modern)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world=worlds())
def test_a_principal_gets_from_the_shared_server_exactly_what_a_server_of_its_own_items_answers(
    world: World,
) -> None:
    anyio.run(check_world, world)


async def test_a_hidden_tool_is_refused_word_for_word_as_an_unknown_one() -> None:
    acme, globex = Principal("a", "acme", frozenset()), Principal("g", "globex", frozenset())
    world = World([acme, globex], [Item("tools", "acme_report", "acme", None)])
    app = protected(StreamableHTTPApp(world.server(world.items, visible=True)), world.principals)
    async with http_to(app) as client:
        for modern in (False, True):
            outsider, insider = Caller(client(), globex.token, modern), Caller(client(), acme.token, modern)
            await outsider.open()
            await insider.open()
            hidden = await outsider.answer("tools/call", {"name": "acme_report", "arguments": {}})
            unknown = await outsider.answer("tools/call", {"name": "acme_reporx", "arguments": {}})
            shown = await insider.answer("tools/call", {"name": "acme_report", "arguments": {}})
            listed = await outsider.answer("tools/list", {})
            assert hidden["error"]["message"] == "Unknown tool: 'acme_report'"
            assert hidden["error"]["code"] == unknown["error"]["code"] == -32602
            assert unknown["error"]["message"] == "Unknown tool: 'acme_reporx'"
            assert shown["result"]["content"][0]["text"] == "acme_report of acme"
            assert listed["result"]["tools"] == []


def scoped_world() -> tuple[World, Server]:
    acme, globex = Principal("a", "acme", frozenset()), Principal("g", "globex", frozenset())
    world = World(
        [acme, globex], [Item("tools", "acme_pay", "acme", None), Item("tools", "any_pay", None, None)]
    )
    server = world.server([], visible=True)
    for item in world.items:  # both ask for a scope no key grants
        server.add_tool(lambda: "paid", name=item.key, scopes=["payments"])
    return world, server


async def test_a_hidden_items_scopes_are_never_asked_for_while_a_shown_ones_are_a_403_challenge() -> None:
    world, server = scoped_world()
    app = protected(StreamableHTTPApp(server), world.principals)
    async with http_to(app) as client:
        answers = {}
        for modern in (False, True):
            outsider = Caller(client(), world.principals[1].token, modern)
            await outsider.open()
            hidden = await outsider.answer("tools/call", {"name": "acme_pay", "arguments": {}})
            unknown = await outsider.answer("tools/call", {"name": "no_pay", "arguments": {}})
            shown = await outsider.send("tools/call", {"name": "any_pay", "arguments": {}})
            answers[modern] = (hidden, unknown, shown.status_code, shown.headers.get("www-authenticate", ""))
    for hidden, unknown, status, challenge in answers.values():
        assert hidden["error"] == {"code": -32602, "message": "Unknown tool: 'acme_pay'"}
        assert (
            hidden["status"] == unknown["status"] and unknown["error"]["message"] == "Unknown tool: 'no_pay'"
        )
        # as without a hook: the scope challenge of basic/authorization, before the request is served
        assert status == 403 and 'error="insufficient_scope"' in challenge and 'scope="payments"' in challenge


async def test_callers_who_see_the_same_items_share_one_cached_page_and_others_get_their_own() -> None:
    ann, amy = Principal("ann", "acme", frozenset()), Principal("amy", "acme", frozenset())
    bob = Principal("bob", "globex", frozenset())
    world = World(
        [ann, amy, bob], [Item("tools", "acme_x", "acme", None), Item("tools", "globex_x", "globex", None)]
    )
    server = world.server(world.items, visible=True)
    app = protected(StreamableHTTPApp(server), world.principals)
    async with http_to(app) as client:
        listed = {}
        for who in (ann, amy, bob):
            caller = Caller(client(), who.token, False)
            await caller.open()
            listed[who.subject] = [
                t["name"] for t in (await caller.answer("tools/list", {}))["result"]["tools"]
            ]
    assert listed == {"ann": ["acme_x"], "amy": ["acme_x"], "bob": ["globex_x"]}
    assert server.registry.cached_pages == 2


def geo_server(visible: bool) -> Server:
    world = World([], [Item("tools", "geo", "acme", None)])
    server = Server("world", visible=world.audience() if visible else None)
    schema = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
    server.add_tool(lambda region: f"weather in {region}", name="geo", input_schema=schema)
    return server


async def test_a_hidden_tools_mirrored_headers_are_not_checked_before_it_is_known_to_be_seen() -> None:
    acme, globex = Principal("a", "acme", frozenset()), Principal("g", "globex", frozenset())
    call = {"name": "geo", "arguments": {"region": "north"}}  # without its Mcp-Param-Region header
    hooked = protected(StreamableHTTPApp(geo_server(visible=True)), [acme, globex])
    plain = protected(StreamableHTTPApp(geo_server(visible=False)), [acme, globex])
    async with http_to(hooked) as client, http_to(plain) as plain_client:
        insider, outsider = Caller(client(), acme.token, True), Caller(client(), globex.token, True)
        reference = Caller(plain_client(), acme.token, True)
        for caller in (insider, outsider, reference):
            await caller.open()
        seen_by_insider = await insider.answer("tools/call", call)
        without_hook = await reference.answer("tools/call", call)
        hidden = await outsider.answer("tools/call", call)
        unknown = await outsider.answer("tools/call", {"name": "gex", "arguments": {"region": "north"}})
    assert seen_by_insider == without_hook
    assert seen_by_insider["status"] == 400 and seen_by_insider["error"]["code"] == -32020
    assert hidden["status"] == unknown["status"] == 400
    assert hidden["error"] == {"code": -32602, "message": "Unknown tool: 'geo'"}
