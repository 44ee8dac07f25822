"""The request handlers run on Services (a Registry, Peers, a TaskEngine, a sealer) and a fake session: no
Server, no stream, no Connection."""

from __future__ import annotations

from typing import Any, cast

import pytest

from mcpkit import Context, LocalError, MCPError
from mcpkit.protocol.lifecycle import Negotiated
from mcpkit.runtime.session import Session
from mcpkit.server.asking import SessionAsker, asker_for
from mcpkit.server.handlers import HANDLERS
from mcpkit.server.peers import Peers
from mcpkit.server.registry import Registry
from mcpkit.server.request_state import StateSealer
from mcpkit.server.resources import resource_from
from mcpkit.server.round_trip import CannotAsk, InputRequired, RoundTrip
from mcpkit.server.services import Services
from mcpkit.server.tasks.engine import TaskEngine
from mcpkit.server.tools import Tool

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

JSON = dict[str, Any]
HANDSHAKE, STATELESS = "2025-11-25", "2026-07-28"


class FakeSession:
    """Records what a handler would have sent; sessions are only ever used through these methods."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, JSON]] = []
        self.broadcast: list[str] = []
        self.notified: list[tuple[str, JSON | None]] = []

    async def request(self, method: str, params: JSON, **_options: Any) -> JSON:
        self.asked.append((method, params))
        return {"action": "accept", "content": {"name": "Ada"}}

    def notify_soon(self, method: str, params: JSON | None) -> None:
        self.broadcast.append(method)

    async def notify(self, method: str, params: JSON | None, related: Any = None) -> None:
        self.notified.append((method, params))


def as_session(fake: FakeSession) -> Session:
    """The fake where the library takes a Session: it has the methods handlers, askers and Peers use."""
    return cast(Session, fake)


def agreement(version: str = HANDSHAKE, client: JSON | None = None) -> Negotiated:
    return Negotiated(version, {"name": "c"}, client if client is not None else {"elicitation": {}}, {}, {})


def context(registry: Registry, session: FakeSession, version: str = HANDSHAKE, **ask: Any) -> Context:
    agreed = agreement(version)
    method, params = ask.get("method", "tools/call"), ask.get("params", {})
    asker = asker_for(
        as_session(session), 1, method, params, agreed, sealer=StateSealer(b"k" * 32), timeout=5.0
    )
    return Context(registry, as_session(session), 1, agreed, asker)


def services(registry: Registry, peers: Peers | None = None) -> Services:
    return Services(registry, peers or Peers(), TaskEngine(), StateSealer(b"k" * 32))


async def greet(ctx: Context) -> str:
    answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {(answer.content or {}).get('name')}"


async def test_tools_call_runs_on_a_registry_and_asks_through_the_session_it_is_given() -> None:
    registry, session = Registry(), FakeSession()
    registry.add_tool(Tool.from_function(greet, context_type=Context))
    result = await HANDLERS["tools/call"](services(registry), context(registry, session), {"name": "greet"})
    assert result["content"] == [{"type": "text", "text": "hello Ada"}]
    assert [method for method, _ in session.asked] == ["elicitation/create"]


async def test_the_same_tool_served_stateless_asks_by_input_required_and_never_touches_the_session() -> None:
    registry, session = Registry(), FakeSession()
    registry.add_tool(Tool.from_function(greet, context_type=Context))
    ctx = context(registry, session, STATELESS, params={"name": "greet"})
    assert isinstance(ctx.asker, RoundTrip)
    with pytest.raises(InputRequired) as need:
        await HANDLERS["tools/call"](services(registry), ctx, {"name": "greet"})
    assert list(need.value.requests) == ["elicitation-1"]
    assert session.asked == []


async def test_the_asker_is_chosen_once_from_the_era_and_the_method() -> None:
    session, sealer = FakeSession(), StateSealer(b"k" * 32)
    choose = [
        asker_for(as_session(session), 1, "tools/call", {}, agreement(HANDSHAKE), sealer=sealer, timeout=1.0),
        asker_for(as_session(session), 1, "tools/call", {}, agreement(STATELESS), sealer=sealer, timeout=1.0),
        asker_for(as_session(session), 1, "tools/list", {}, agreement(STATELESS), sealer=sealer, timeout=1.0),
    ]
    assert [type(a) for a in choose] == [SessionAsker, RoundTrip, CannotAsk]
    with pytest.raises(LocalError, match="cannot ask the client"):
        await choose[2].ask("roots/list", {})


async def test_resources_subscribe_records_the_uri_on_peers_for_that_session_only() -> None:
    registry, peers, one, two = Registry(), Peers(), FakeSession(), FakeSession()
    registry.add_resource(resource_from("test://a", None, "a", Context, allow_traversal=False))
    with peers.connected(as_session(one)), peers.connected(as_session(two)):
        await HANDLERS["resources/subscribe"](
            services(registry, peers), context(registry, one), {"uri": "test://a"}
        )
        with pytest.raises(MCPError) as unknown:
            await HANDLERS["resources/subscribe"](
                services(registry, peers), context(registry, one), {"uri": "test://b"}
            )
        await peers.resource_updated("test://a")
        assert peers.subscriptions(as_session(one)) == {"test://a"}
        assert peers.subscriptions(as_session(two)) == frozenset()
    assert unknown.value.code == -32002
    assert one.notified == [("notifications/resources/updated", {"uri": "test://a"})] and two.notified == []
    assert len(peers) == 0  # the sessions left and took their subscriptions with them


async def test_a_registry_change_reaches_every_connected_session_through_peers() -> None:
    peers, session = Peers(), FakeSession()
    registry = Registry(on_change=peers.changed)
    with peers.connected(as_session(session)):
        registry.add_tool(Tool.from_function(greet, context_type=Context))
        registry.remove_tool("greet")
    registry.add_tool(Tool.from_function(greet, context_type=Context))  # nobody connected any more
    assert session.broadcast == ["notifications/tools/list_changed"] * 2


async def test_a_list_is_answered_from_the_registry_and_cached_per_version_and_page() -> None:
    registry, session = Registry(page_size=1), FakeSession()
    for name in ("a", "b"):
        registry.add_tool(Tool.from_function(lambda: "ok", context_type=Context, name=name))
    first = await HANDLERS["tools/list"](services(registry), context(registry, session), {})
    again = await HANDLERS["tools/list"](services(registry), context(registry, session), {})
    assert first is again and "nextCursor" in first and registry.cached_pages == 1


def test_a_context_made_without_a_server_says_so_when_asked_for_it() -> None:
    registry = Registry()
    ctx = context(registry, FakeSession())
    assert ctx.registry is registry
    with pytest.raises(LocalError, match="without a Server"):
        ctx.server  # noqa: B018
