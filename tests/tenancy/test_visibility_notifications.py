"""Notifications follow the visibility hook, as a property over generated changes: every principal, in
both eras (a handshake session, a subscriptions/listen stream), hears a list_changed for exactly the
changes that altered its own view of that list, and resources/updated only for resources it sees, even
when it asked (subscriptions/listen) for another tenant's URIs. Each client reads until a last update
that everyone sees, so "nothing else arrived" is checked without waiting on a clock."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tenancy_world import RESOURCE, Item, Principal, World, protected, register

from in_process import ORIGIN, Driver
from mcpkit import Server
from mcpkit.client.client import Client
from mcpkit.client.subscription import Subscription
from mcpkit.transports.http_client import HTTPClientStream
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio

ANNOUNCED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "resourceTemplates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}
UPDATED = "notifications/resources/updated"
LAST = Item("resources", "res://everyone", None, None)  # the update every client reads up to
# one item of every kind from the start, so every list is a capability the clients can listen to
BASE = [
    Item("tools", "hello", None, None),
    Item("prompts", "hi", None, None),
    Item("resourceTemplates", "b://{id}", None, None),
]
PRINCIPALS = [
    Principal("acme-admin", "acme", frozenset({"admin"})),
    Principal("acme-staff", "acme", frozenset({"staff"})),
    Principal("globex-admin", "globex", frozenset({"admin"})),
]


@st.composite
def changes(draw: st.DrawFn) -> tuple[list[Item], list[Item]]:
    """The resources at the start, and items added in turn (each a change of one list)."""
    audience = st.tuples(st.sampled_from((None, "acme", "globex")), st.sampled_from((None, "admin", "staff")))
    resources = [
        Item("resources", f"res://{t}-{r}-{n}", t, r)
        for n, (t, r) in enumerate(draw(st.lists(audience, max_size=4)))
    ]
    kind = st.sampled_from(tuple(ANNOUNCED))
    added = []
    for n, (k, (t, r)) in enumerate(draw(st.lists(st.tuples(kind, audience), min_size=1, max_size=6))):
        key = {
            "tools": f"t{n}",
            "prompts": f"p{n}",
            "resources": f"res://new{n}",
            "resourceTemplates": f"tpl://{n}/{{id}}",
        }[k]
        added.append(Item(k, key, t, r))
    return resources, added


@asynccontextmanager
async def client_of(app: Any, principal: Principal, era: str) -> AsyncIterator[Client]:
    async with anyio.create_task_group() as tg:
        headers = {"authorization": f"Bearer {principal.token}"}
        async with httpx.AsyncClient(
            transport=Driver(app, tg), base_url=ORIGIN, headers=headers, timeout=10
        ) as http:
            stream = HTTPClientStream(RESOURCE, http, tg)
            try:
                async with Client(stream, era=era, cache=False) as client:
                    yield client
            finally:
                await stream.aclose()
                tg.cancel_scope.cancel()


async def heard_until_last(subscription: Subscription) -> Counter[tuple[str, str]]:
    heard: Counter[tuple[str, str]] = Counter()
    async for method, params in subscription:
        uri = str(params.get("uri", "")) if method == UPDATED else ""
        if uri == LAST.key:
            return heard
        heard[(method, uri)] += 1
    raise AssertionError("the stream ended before the last update")


def expected(principal: Principal, resources: list[Item], added: list[Item]) -> Counter[tuple[str, str]]:
    auth = principal.access()
    wanted: Counter[tuple[str, str]] = Counter()
    for item in added:
        if item.seen_by(auth):
            wanted[(ANNOUNCED[item.kind], "")] += 1
    for item in resources:
        if item.seen_by(auth):
            wanted[(UPDATED, item.key)] += 1
    return wanted


async def check(resources: list[Item], added: list[Item]) -> None:
    world = World(PRINCIPALS, [*resources, LAST, *BASE, *added])
    server = Server("world", visible=world.audience())
    for item in [*resources, LAST, *BASE]:
        register(server, item)
    app = protected(StreamableHTTPApp(server), PRINCIPALS)
    everyone = [item.key for item in [*resources, LAST]]
    async with AsyncExitStack() as stack:
        listening = []
        for principal in PRINCIPALS:
            for era in ("handshake", "modern"):
                client = await stack.enter_async_context(client_of(app, principal, era))
                await client.list_tools()  # a session speaks for a token from its first request on
                # a session subscribes to what it may; a listen stream asks for every URI, others' too
                own = [
                    key for key in everyone if world.items[everyone.index(key)].seen_by(principal.access())
                ]
                uris = own if era == "handshake" else everyone
                sub = await stack.enter_async_context(
                    client.listen(tools=True, prompts=True, resources=True, uris=uris)
                )
                listening.append((principal, era, sub))
        for item in added:
            register(server, item)
        for item in resources:
            await server.notify_resource_updated(item.key)
        await anyio.wait_all_tasks_blocked()  # the list_changed sent soon are sent
        await server.notify_resource_updated(LAST.key)
        for principal, era, sub in listening:
            with anyio.fail_after(10):
                heard = await heard_until_last(sub)
            assert heard == expected(principal, resources, added), (principal.subject, era)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(change=changes())
def test_each_principal_hears_of_exactly_the_changes_to_what_it_sees(
    change: tuple[list[Item], list[Item]],
) -> None:
    anyio.run(check, *change)
