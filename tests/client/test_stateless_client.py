"""mcpkit's Client in the 2026-07-28 era against mcpkit's Server, in memory through real JSON bytes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from conftest import requirement
from mcpkit.client.client import Client
from mcpkit.client.era import forget
from mcpkit.client.result_cache import ResultCache
from mcpkit.content import text
from mcpkit.protocol.errors import MCPError
from mcpkit.protocol.versions import HANDSHAKE_VERSIONS
from mcpkit.runtime.stream import Outgoing, WrappedStream, memory_pair
from mcpkit.server.caching import CacheHint
from mcpkit.server.context import Context
from mcpkit.server.server import Server
from mcpkit.testing import connect
from spec_schema import CheckedStream, available

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

JSON = dict[str, Any]
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def build(**options: Any) -> Server:
    server = Server("modern", "3.1", **options)
    reads, asks = itertools.count(1), itertools.count(1)

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME)
        return f"Hello, {answer.content['name'] if answer.content else 'nobody'}!"

    @server.tool()
    async def everything(ctx: Context) -> str:
        answers = await ctx.request_input(
            {
                "who": {
                    "method": "elicitation/create",
                    "params": {"message": "Name?", "requestedSchema": NAME},
                },
                "llm": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
                "dirs": {"method": "roots/list", "params": {}},
            }
        )
        roots = ",".join(r["uri"] for r in answers["dirs"]["roots"])
        return f"{answers['who']['content']['name']} / {answers['llm']['content']['text']} / {roots}"

    @server.tool()
    async def stubborn(ctx: Context) -> str:
        await ctx.elicit("Again?", NAME, key=f"again-{next(asks)}")  # a new question every round
        return "never"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.warning("careful")
        return "done"

    @server.resource("test://counted", cache=CacheHint(60_000, "private"))
    def counted() -> str:
        return f"read {next(reads)}"

    @server.resource("test://shared", cache=CacheHint(60_000, "public"))
    def shared() -> str:
        return f"shared {next(reads)}"

    return server


async def elicit(_params: JSON) -> JSON:
    return {"action": "accept", "content": {"name": "Ada"}}


async def sample(_params: JSON) -> JSON:
    return {"role": "assistant", "content": text("hi there"), "model": "m", "stopReason": "endTurn"}


async def test_a_pinned_modern_client_discovers_and_calls_statelessly() -> None:
    async with connect(build(), era="modern") as client:
        assert client.stateless and client.protocol == "2026-07-28"
        assert client.server_info == {"name": "modern", "version": "3.1"}
        assert "tools" in client.server_capabilities
        tools = await client.list_all_tools()
    assert {t["name"] for t in tools} >= {"greet", "everything"}


async def test_a_modern_clients_session_is_made_ready_by_the_event_adopting_the_agreement_returns() -> None:
    async with connect(build(), era="modern") as client:
        assert client.stateless and client.session.ready.is_set()


@requirement("modern-probe-fallback")
async def test_auto_mode_ends_modern_with_a_dual_era_server_and_handshake_with_a_legacy_one() -> None:
    forget()
    async with connect(build(), era="auto") as client:
        assert client.stateless
    async with connect(build(versions=HANDSHAKE_VERSIONS), era="auto", probe_timeout=5) as client:
        assert not client.stateless and client.protocol == HANDSHAKE_VERSIONS[-1]
        assert (await client.call_tool("greet", {}))["isError"] is True  # no elicitation handler given


async def test_auto_mode_remembers_the_era_per_server_key() -> None:
    forget()
    async with connect(build(versions=HANDSHAKE_VERSIONS), era="auto", era_key="legacy-one") as client:
        assert not client.stateless
    # Remembered: the next connection to the same key skips the probe and initializes at once.
    async with connect(build(), era="auto", era_key="legacy-one") as client:
        assert not client.stateless
    forget("legacy-one")
    async with connect(build(), era="auto", era_key="legacy-one") as client:
        assert client.stateless


async def test_input_required_rounds_are_driven_through_the_usual_callbacks() -> None:
    async with connect(build(), era="modern", elicitation=elicit) as client:
        result = await client.call_tool("greet")
    assert result["resultType"] == "complete" and result["content"] == [text("Hello, Ada!")]


async def test_several_input_requests_in_one_round_use_sampling_elicitation_and_roots() -> None:
    roots = [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b", "name": "b"}]
    async with connect(build(), era="modern", elicitation=elicit, sampling=sample, roots=roots) as client:
        result = await client.call_tool("everything")
    assert result["content"] == [text("Ada / hi there / file:///a,file:///b")]


async def test_the_same_tool_works_in_the_handshake_era_through_the_same_callbacks() -> None:
    roots = [{"uri": "file:///a", "name": "a"}]
    async with connect(build(), era="handshake", elicitation=elicit, sampling=sample, roots=roots) as client:
        assert not client.stateless
        result = await client.call_tool("everything")
    assert result["content"] == [text("Ada / hi there / file:///a")]


async def test_rounds_are_bounded() -> None:
    async with connect(build(), era="modern", elicitation=elicit, max_rounds=3) as client:
        with pytest.raises(MCPError, match="after 3 rounds"):
            await client.call_tool("stubborn")


async def test_a_missing_client_capability_surfaces_as_minus_32021() -> None:
    async with connect(build(), era="modern") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("greet")
    assert caught.value.code == -32021 and caught.value.data == {"requiredCapabilities": {"elicitation": {}}}


async def test_results_are_cached_for_their_ttl_and_the_switch_turns_it_off() -> None:
    server = build()
    async with connect(server, era="modern") as client:
        first = await client.read_resource("test://counted")
        again = await client.read_resource("test://counted")
    assert first["contents"][0]["text"] == again["contents"][0]["text"] == "read 1"
    async with connect(server, era="modern", cache=False) as client:
        one = await client.read_resource("test://counted")
        two = await client.read_resource("test://counted")
    assert (one["contents"][0]["text"], two["contents"][0]["text"]) == ("read 2", "read 3")


async def test_only_public_results_go_into_a_shared_cache() -> None:
    shared = ResultCache()
    server = build()
    async with connect(server, era="modern", shared_cache=shared) as client:
        await client.read_resource("test://counted")
        await client.read_resource("test://shared")
    assert len(shared) == 1
    async with connect(server, era="modern", shared_cache=shared) as other:
        assert (await other.read_resource("test://shared"))["contents"][0]["text"] == "shared 2"
        assert (await other.read_resource("test://counted"))["contents"][0]["text"] == "read 3"


async def test_listen_delivers_list_changes_and_updates_in_the_modern_era() -> None:
    server = build()
    async with connect(server, era="modern") as client:
        async with client.listen(tools=True, uris=["test://counted"]) as subscription:
            assert subscription.acknowledged == {
                "toolsListChanged": True,
                "resourceSubscriptions": ["test://counted"],
            }
            server.add_tool(lambda: "x", name="late")
            await server.notify_resource_updated("test://counted")
            with anyio.fail_after(5):
                got = [await subscription.__anext__(), await subscription.__anext__()]
        assert [m for m, _ in got] == ["notifications/tools/list_changed", "notifications/resources/updated"]
        with anyio.fail_after(5):
            while server.peers.listeners:  # the server saw the cancellation and dropped the subscription
                await anyio.sleep(0.01)


async def test_listen_works_the_same_on_a_handshake_session() -> None:
    server = build()
    async with (
        connect(server, era="handshake") as client,
        client.listen(tools=True, uris=["test://counted"]) as subscription,
    ):
        server.add_tool(lambda: "x", name="late")
        await server.notify_resource_updated("test://counted")
        with anyio.fail_after(5):
            got = [await subscription.__anext__(), await subscription.__anext__()]
    # On a session, list_changed is sent from a task of its own, so the order may differ.
    assert {m for m, _ in got} == {"notifications/tools/list_changed", "notifications/resources/updated"}


async def test_the_log_level_rides_in_each_request_meta() -> None:
    logs: list[JSON] = []

    def seen(method: str, params: JSON) -> None:
        if method == "notifications/message":
            logs.append(params)

    async with connect(build(), era="modern", on_notification=seen) as client:
        await client.call_tool("chatty")
        assert logs == []  # no level asked: the server MUST NOT log
        await client.set_logging_level("info")
        await client.call_tool("chatty")
        await client.set_logging_level("error")
        await client.call_tool("chatty")
    assert [entry["data"] for entry in logs] == ["careful"]


async def test_on_log_gets_every_level_without_set_logging_level() -> None:
    logs: list[JSON] = []
    async with connect(build(), era="modern", on_log=logs.append) as client:
        await client.call_tool("chatty")  # on_log given: the requests ask for debug and up
        await client.set_logging_level("error")
        await client.call_tool("chatty")
    assert [entry["data"] for entry in logs] == ["careful"]


async def test_ping_is_a_discover_round_trip_in_the_modern_era() -> None:
    async with connect(build(), era="modern") as client:
        await client.ping()


@pytest.mark.skipif(not available("2026-07-28"), reason="needs ../shared/spec beside the checkout")
async def test_every_message_both_sides_send_satisfies_the_2026_schema() -> None:
    server = build()
    client_end, server_end = memory_pair()
    client_side, server_side = CheckedStream(client_end, server=False), CheckedStream(server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_side)
        async with Client(client_side, era="modern", elicitation=elicit, sampling=sample, roots=[]) as client:
            await client.list_all_tools()
            await client.call_tool("everything")
            await client.read_resource("test://counted")
            await client.list_all_resource_templates()
            async with client.listen(tools=True) as subscription:
                server.add_tool(lambda: "x", name="late")
                with anyio.fail_after(5):
                    await subscription.__anext__()
        await client_end.aclose()
        tg.cancel_scope.cancel()
    assert client_side.checked >= 6 and server_side.checked >= 6
    assert client_side.failures == [] and server_side.failures == []


async def test_structured_content_may_be_any_json_value_in_2026_and_only_an_object_before() -> None:
    server = Server("shapes")

    def numbers() -> list[int]:
        return [1, 2, 3]

    server.add_tool(numbers, output_schema={"type": "array", "items": {"type": "integer"}})
    async with connect(server, era="modern") as client:
        [tool] = await client.list_all_tools()
        result = await client.call_tool("numbers")
    assert tool["outputSchema"]["type"] == "array" and result["structuredContent"] == [1, 2, 3]
    async with connect(server, era="handshake") as client:
        [tool] = await client.list_all_tools()
        result = await client.call_tool("numbers")
    # 2025-11-25: outputSchema and structuredContent are objects, so an array travels as text only.
    assert "outputSchema" not in tool and "structuredContent" not in result
    assert result["content"] == [text("[1,2,3]")]


class Recording(WrappedStream):
    """A client end that keeps what the client sends."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.sent: list[JSON] = []

    async def send(self, out: Outgoing) -> None:
        self.sent.append(json.loads(out.data))
        await self.inner.send(out)


@requirement("modern-retry-echo-state")
async def test_a_retry_has_a_new_id_and_echoes_the_state_exactly_and_only_when_given() -> None:
    server = build()

    client_end, server_end = memory_pair()
    recording = Recording(client_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        async with Client(recording, era="modern", elicitation=elicit) as client:
            await client.call_tool("greet")
        await client_end.aclose()
        tg.cancel_scope.cancel()
    calls = [m for m in recording.sent if m.get("method") == "tools/call"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    assert "requestState" not in calls[0]["params"] and calls[1]["params"]["requestState"]
    assert calls[1]["params"]["inputResponses"]


async def test_no_request_state_is_sent_back_when_the_server_gave_none() -> None:
    from mcpkit.client.round_trips import drive_round_trips

    sent: list[JSON] = []
    replies: Iterator[JSON] = iter(
        [{"resultType": "input_required", "inputRequests": {"k": {"method": "roots/list"}}}, {"content": []}]
    )

    async def send(params: JSON) -> JSON:
        sent.append(params)
        return next(replies)

    async def answer(method: str, params: JSON) -> JSON:
        return {"roots": []}

    first = await send({"name": "t", "requestState": "stale"})
    result = await drive_round_trips(send, answer, {"name": "t", "requestState": "stale"}, first, 3)
    assert result == {"content": []}
    assert sent[1] == {
        "name": "t",
        "inputResponses": {"k": {"roots": []}},
    }  # no requestState invented or kept


@requirement("modern-result-type")
def test_an_absent_result_type_is_complete_and_an_unknown_one_is_invalid() -> None:
    from mcpkit.protocol.modern import result_type

    assert result_type({"content": []}) == "complete"
    assert result_type({"resultType": "input_required"}) == "input_required"
    with pytest.raises(MCPError):
        result_type({"resultType": "maybe_later"})
