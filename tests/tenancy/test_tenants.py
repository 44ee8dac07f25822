"""Many tenants in one process (`Tenants`): each tenant's requests reach its own Server in its own app,
chosen by the tenant claim of the verified token. Checked as a property over generated tenants whose
items share names: what a principal gets through Tenants, in both eras, is answer for answer what its
tenant's server alone answers; and nothing one tenant holds (a session, a task) is found from another."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tenancy_world import KINDS, Caller, Item, Principal, World, everything_seen, http_to, protected

from mcpkit import Server
from mcpkit.transports.http_server import StreamableHTTPApp, Tenants
from mcpkit.transports.http_server.event_store import InMemoryEventStore

pytestmark = pytest.mark.anyio

NAMES = {
    "tools": "report",
    "prompts": "brief",
    "resources": "doc://readme",
    "resourceTemplates": "doc://notes/{id}",
}


def tenant_items(tenant: str, kinds: list[str]) -> list[Item]:
    """The same names in every tenant; what each answers names its tenant."""
    return [Item(kind, NAMES[kind], tenant, None) for kind in kinds]


@st.composite
def tenancies(draw: st.DrawFn) -> tuple[list[Principal], dict[str, list[Item]]]:
    tenants = draw(
        st.lists(st.sampled_from(("acme", "globex", "initech")), min_size=2, max_size=3, unique=True)
    )
    principals = [
        Principal(f"{t}-{n}", t, frozenset()) for t in tenants for n in range(draw(st.integers(1, 2)))
    ]
    catalogs = {
        t: tenant_items(t, draw(st.lists(st.sampled_from(KINDS), min_size=1, unique=True))) for t in tenants
    }
    return principals, catalogs


def server_of(items: list[Item]) -> Server:
    return World([], items).server(items, visible=False)


async def seen(app: Any, principal: Principal, items: list[Item], modern: bool) -> list[dict[str, Any]]:
    async with http_to(app) as client:
        caller = Caller(client(), principal.token, modern)
        await caller.open()
        return await everything_seen(caller, items)


async def check(principals: list[Principal], catalogs: dict[str, list[Item]]) -> None:
    every_item = [item for items in catalogs.values() for item in items]
    tenants = protected(Tenants(lambda tenant: server_of(catalogs[tenant])), principals)
    for principal in principals:
        alone = protected(StreamableHTTPApp(server_of(catalogs[principal.tenant])), principals)
        for modern in (False, True):
            answers = await seen(tenants, principal, every_item, modern)
            assert answers == await seen(alone, principal, every_item, modern), (principal, modern)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tenancy=tenancies())
def test_a_principal_gets_through_tenants_exactly_what_its_tenants_server_alone_answers(
    tenancy: tuple[list[Principal], dict[str, list[Item]]],
) -> None:
    anyio.run(check, *tenancy)


ACME, GLOBEX = Principal("a", "acme", frozenset()), Principal("g", "globex", frozenset())


def tasking(tenant: str) -> Server:
    server = Server(tenant)

    @server.tool(task=True)
    async def slow() -> str:
        return f"done for {tenant}"

    return server


async def test_a_session_or_task_of_one_tenant_names_nothing_in_anothers() -> None:
    app = protected(Tenants(tasking), [ACME, GLOBEX])
    async with http_to(app) as client:
        acme, globex = Caller(client(), ACME.token, False), Caller(client(), GLOBEX.token, False)
        await acme.open()
        await globex.open()
        task = await acme.answer("tools/call", {"name": "slow", "arguments": {}, "task": {}})
        task_id = task["result"]["task"]["taskId"]
        assert (await acme.answer("tasks/get", {"taskId": task_id}))["result"]["taskId"] == task_id
        missing = await globex.answer("tasks/get", {"taskId": task_id})
        unknown = await globex.answer("tasks/get", {"taskId": "no-such-task"})
        assert missing["error"]["code"] == unknown["error"]["code"]
        globex.headers["mcp-session-id"] = acme.headers["mcp-session-id"]  # acme's session, globex's token
        borrowed = await globex.answer("tools/list", {})
    assert borrowed["status"] == 404


async def test_a_token_without_a_tenant_and_one_for_an_unknown_tenant_are_refused_alike() -> None:
    stranger, nobody = Principal("s", "umbrella", frozenset()), Principal("n", "", frozenset())
    app = protected(
        Tenants(lambda t: tasking(t) if t in ("acme", "globex") else None), [ACME, stranger, nobody]
    )
    async with http_to(app) as client:
        refusals = []
        for who in (stranger, nobody):
            response = await Caller(client(), who.token, False).send("tools/list", {})
            refusals.append((response.status_code, response.json()))
        served = Caller(client(), ACME.token, False)
        await served.open()
    assert refusals[0] == refusals[1]
    assert refusals[0][0] == 403


def test_tenants_refuse_a_part_every_tenant_would_share() -> None:
    with pytest.raises(TypeError, match="event_store"):
        Tenants(tasking, event_store=InMemoryEventStore())


async def test_tenants_refuse_to_serve_a_tenant_that_build_hands_anothers_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    one = tasking("both")
    app = protected(Tenants(lambda _tenant: one), [ACME, GLOBEX])
    async with http_to(app) as client:
        first = Caller(client(), ACME.token, False)
        await first.open()
        second = await Caller(client(), GLOBEX.token, False).send("tools/list", {})
        still = await first.answer("tools/list", {})
    assert second.status_code == 500
    assert "build('globex') returned the server of tenant 'acme'" in caplog.text
    assert [tool["name"] for tool in still["result"]["tools"]] == ["slow"]


async def test_a_lifespan_shutdown_ends_every_tenants_sessions() -> None:
    tenants = Tenants(tasking)
    app = protected(tenants, [ACME])
    async with http_to(app) as client:
        acme = Caller(client(), ACME.token, False)
        await acme.open()
        assert "result" in await acme.answer("tools/list", {})
        events = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
        sent: list[str] = []

        async def receive() -> dict[str, Any]:
            return next(events)

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message["type"])

        await tenants({"type": "lifespan"}, receive, send)
        after = await acme.answer("tools/list", {})  # its session ended with its tenant's app
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert after["status"] == 404
