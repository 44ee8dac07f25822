"""The 2026-07-28 (stateless) era served by the same Server, driven with raw JSON-RPC in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest

from conftest import requirement
from mcpkit.content import text
from mcpkit.runtime.stream import MemoryStream, Outgoing, memory_pair
from mcpkit.server.caching import CacheHint
from mcpkit.server.context import Context
from mcpkit.server.server import Server
from mcpkit.testing import connect
from spec_schema import CheckedStream, available

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.both_loops,
    pytest.mark.skipif(not available("2026-07-28"), reason="needs ../shared/spec beside the checkout"),
]

JSON = dict[str, Any]
V = "2026-07-28"
META = "io.modelcontextprotocol/"


def meta(caps: JSON | None = None, **extra: Any) -> JSON:
    fields = {
        META + "protocolVersion": V,
        META + "clientCapabilities": caps if caps is not None else {},
        META + "clientInfo": {"name": "raw", "version": "1"},
    }
    fields.update({META + k: v for k, v in extra.items()})
    return fields


class Raw:
    """A client end that writes raw requests and reads whatever the server sends."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream
        self.ids = iter(range(1, 10_000))

    async def send(self, message: JSON) -> None:
        await self.stream.send(Outgoing(orjson.dumps({"jsonrpc": "2.0", **message})))

    async def next(self) -> JSON:
        with anyio.fail_after(5):
            data = await self.stream.receive()
        assert isinstance(data, bytes)
        message: JSON = orjson.loads(data)
        return message

    async def call(self, method: str, params: JSON | None = None, **meta_fields: Any) -> JSON:
        """Send a modern request and return its response, collecting notifications on the way."""
        rid = next(self.ids)
        body = dict(params or {})
        body.setdefault("_meta", meta(**meta_fields))
        await self.send({"id": rid, "method": method, "params": body})
        self.notes: list[JSON] = []
        while True:
            message = await self.next()
            if message.get("id") == rid and "method" not in message:
                return message
            self.notes.append(message)


def build() -> Server:
    server = Server("stateless", "2.0", instructions="test server", cache=CacheHint(60_000, "public"))

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"Hello, {answer.content['name'] if answer.content else 'nobody'}!"

    @server.tool()
    async def two_steps(ctx: Context) -> str:
        first = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"n": {"type": "string"}}}, key="a"
        )
        second = await ctx.elicit(
            "Color?", {"type": "object", "properties": {"c": {"type": "string"}}}, key="b"
        )
        assert first.content is not None and second.content is not None
        return f"{first.content['n']} likes {second.content['c']}"

    @server.tool()
    async def needs_sampling(ctx: Context) -> str:
        result = await ctx.sample("hi")
        return str(result["content"]["text"])

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("working")
        return "done"

    @server.resource("test://doc", cache=CacheHint(5_000, "private"))
    def doc() -> str:
        return "the doc"

    @server.prompt()
    def plain() -> str:
        return "a prompt"

    return server


@asynccontextmanager
async def raw_client(server: Server) -> AsyncIterator[Raw]:
    """A raw client end; every message the server sends is checked against the 2026-07-28 schema."""
    client_end, server_end = memory_pair()
    checked = CheckedStream(server_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, checked)
        yield Raw(client_end)
        await client_end.aclose()
        tg.cancel_scope.cancel()
    assert checked.checked > 0 and checked.failures == []


async def test_discover_names_versions_capabilities_identity_and_cache_hints() -> None:
    async with raw_client(build()) as raw:
        reply = await raw.call("server/discover")
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == V and "2025-11-25" in result["supportedVersions"]
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])
    assert result["_meta"][META + "serverInfo"] == {"name": "stateless", "version": "2.0"}
    assert result["instructions"] == "test server"
    assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")


@requirement("modern-result-type")
async def test_every_result_carries_result_type_and_cacheable_ones_carry_hints() -> None:
    async with raw_client(build()) as raw:
        tools = (await raw.call("tools/list"))["result"]
        read = (await raw.call("resources/read", {"uri": "test://doc"}))["result"]
        prompt = (await raw.call("prompts/get", {"name": "plain"}))["result"]
    assert tools["resultType"] == "complete" and (tools["ttlMs"], tools["cacheScope"]) == (60_000, "public")
    assert read["contents"][0]["text"] == "the doc" and (read["ttlMs"], read["cacheScope"]) == (
        5_000,
        "private",
    )
    assert prompt["resultType"] == "complete" and "ttlMs" not in prompt


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({}, -32602),  # no _meta at all
        ({"_meta": {META + "protocolVersion": V}}, -32602),  # no clientCapabilities
        ({"_meta": {META + "clientCapabilities": {}, META + "protocolVersion": 7}}, -32602),
    ],
)
@requirement("modern-meta-required")
async def test_a_request_missing_required_meta_is_invalid_params(params: JSON, code: int) -> None:
    async with raw_client(build()) as raw:
        await raw.send({"id": 1, "method": "tools/list", "params": params})
        reply = await raw.next()
    assert reply["id"] == 1 and reply["error"]["code"] == code


async def test_client_info_is_optional() -> None:
    async with raw_client(build()) as raw:
        fields = {META + "protocolVersion": V, META + "clientCapabilities": {}}
        reply = await raw.call("tools/list", {"_meta": fields})
    assert reply["result"]["resultType"] == "complete"


@requirement("modern-unsupported-version")
async def test_an_unknown_version_is_unsupported_protocol_version_with_both_lists() -> None:
    async with raw_client(build()) as raw:
        reply = await raw.call("tools/list", protocolVersion="1900-01-01")
    error = reply["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "1900-01-01" and V in error["data"]["supported"]


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "initialize"])
async def test_methods_removed_in_2026_are_method_not_found(method: str) -> None:
    async with raw_client(build()) as raw:
        reply = await raw.call(method, {"level": "info", "uri": "test://doc"})
    assert reply["error"]["code"] == -32601


async def test_a_missing_resource_is_invalid_params_with_its_uri() -> None:
    async with raw_client(build()) as raw:
        reply = await raw.call("resources/read", {"uri": "test://nope"})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"] == {"uri": "test://nope"}


async def test_an_elicit_in_a_tool_becomes_an_input_required_round_trip() -> None:
    async with raw_client(build()) as raw:
        caps: JSON = {"elicitation": {}}
        first = (await raw.call("tools/call", {"name": "greet"}, clientCapabilities=caps))["result"]
        assert first["resultType"] == "input_required"
        [(key, request)] = first["inputRequests"].items()
        assert request["method"] == "elicitation/create" and request["params"]["message"] == "Your name?"
        answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
        retry = {"name": "greet", "inputResponses": answer, "requestState": first["requestState"]}
        second = (await raw.call("tools/call", retry, clientCapabilities=caps))["result"]
    assert second["resultType"] == "complete"
    assert second["content"] == [text("Hello, Ada!")]


async def test_answers_from_earlier_rounds_ride_in_the_sealed_state() -> None:
    async with raw_client(build()) as raw:
        caps: JSON = {"elicitation": {}}
        r1 = (await raw.call("tools/call", {"name": "two_steps"}, clientCapabilities=caps))["result"]
        assert list(r1["inputRequests"]) == ["a"]
        retry = {
            "name": "two_steps",
            "inputResponses": {"a": {"action": "accept", "content": {"n": "Ada"}}, "junk": {"x": 1}},
            "requestState": r1["requestState"],
        }
        r2 = (await raw.call("tools/call", retry, clientCapabilities=caps))["result"]
        assert list(r2["inputRequests"]) == ["b"]
        retry = {
            "name": "two_steps",
            "inputResponses": {"b": {"action": "accept", "content": {"c": "green"}}},
            "requestState": r2["requestState"],
        }
        r3 = (await raw.call("tools/call", retry, clientCapabilities=caps))["result"]
    assert r3["content"] == [text("Ada likes green")]


async def test_a_retry_without_the_answer_is_asked_again_not_failed() -> None:
    async with raw_client(build()) as raw:
        caps: JSON = {"elicitation": {}}
        first = (await raw.call("tools/call", {"name": "greet"}, clientCapabilities=caps))["result"]
        retry = {"name": "greet", "inputResponses": {"wrong": {"action": "accept"}}}
        again = (await raw.call("tools/call", retry, clientCapabilities=caps))["result"]
    assert again["resultType"] == "input_required"
    assert again["inputRequests"].keys() == first["inputRequests"].keys()


@pytest.mark.parametrize("mangle", ["flip", "other-request", "garbage"])
@requirement("modern-request-state-integrity")
async def test_tampered_or_misplaced_request_state_is_rejected(mangle: str) -> None:
    async with raw_client(build()) as raw:
        caps: JSON = {"elicitation": {}}
        first = (await raw.call("tools/call", {"name": "two_steps"}, clientCapabilities=caps))["result"]
        state: str = first["requestState"]
        name = "two_steps"
        if mangle == "flip":
            state = state[:5] + ("A" if state[5] != "A" else "B") + state[6:]
        elif mangle == "other-request":
            name = "greet"  # valid state, but issued for another call
        else:
            state = "not-a-state"
        retry = {"name": name, "inputResponses": {"a": {"action": "decline"}}, "requestState": state}
        reply = await raw.call("tools/call", retry, clientCapabilities=caps)
    assert reply["error"]["code"] == -32602 and "requestState" in reply["error"]["message"]


async def test_expired_request_state_is_rejected() -> None:
    server = build()
    server.state_sealer.ttl = -1.0
    async with raw_client(server) as raw:
        caps: JSON = {"elicitation": {}}
        first = (await raw.call("tools/call", {"name": "greet"}, clientCapabilities=caps))["result"]
        retry = {"name": "greet", "inputResponses": {}, "requestState": first["requestState"]}
        reply = await raw.call("tools/call", retry, clientCapabilities=caps)
    assert reply["error"]["code"] == -32602 and "expired" in reply["error"]["message"]


async def test_state_sealed_by_one_replica_opens_on_another_with_the_same_key() -> None:
    key = b"k" * 32
    one, two = Server("a"), Server("b")
    for s in (one, two):
        s.state_sealer.key = key
    token = one.state_sealer.seal({"answers": {}}, "binding")
    assert two.state_sealer.open(token, "binding") == {"answers": {}}
    with pytest.raises(Exception, match="integrity"):
        Server("c").state_sealer.open(token, "binding")


@requirement("modern-missing-capability")
async def test_an_undeclared_client_capability_is_missing_required_client_capability() -> None:
    async with raw_client(build()) as raw:
        reply = await raw.call("tools/call", {"name": "needs_sampling"})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


@requirement("modern-no-log-without-level")
async def test_logs_only_reach_a_request_that_set_a_log_level() -> None:
    async with raw_client(build()) as raw:
        await raw.call("tools/call", {"name": "chatty"})
        assert raw.notes == []
        await raw.call("tools/call", {"name": "chatty"}, logLevel="info")
        [note] = raw.notes
    assert note["method"] == "notifications/message" and note["params"]["data"] == "working"


@requirement("modern-listen-ack-first")
async def test_listen_acknowledges_first_then_delivers_only_what_was_asked_tagged() -> None:
    server = build()
    async with raw_client(server) as raw:
        filt = {"toolsListChanged": True, "resourceSubscriptions": ["test://doc"]}
        await raw.send(
            {"id": 77, "method": "subscriptions/listen", "params": {"_meta": meta(), "notifications": filt}}
        )
        ack = await raw.next()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"][META + "subscriptionId"] == 77
        assert ack["params"]["notifications"] == filt
        server.add_prompt(lambda: "x", name="new_prompt")  # not subscribed: nothing arrives
        server.add_tool(lambda: "y", name="new_tool")
        await server.notify_resource_updated("test://doc")
        await server.notify_resource_updated("test://other")
        changed, updated = await raw.next(), await raw.next()
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"][META + "subscriptionId"] == 77
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == "test://doc"
        await raw.send({"method": "notifications/cancelled", "params": {"requestId": 77}})
        reply = await raw.call("tools/list")
        assert raw.notes == [] and reply["result"]["resultType"] == "complete"
    assert server.peers.listeners == set()


async def test_the_same_elicit_tool_works_in_the_handshake_era_too() -> None:
    async def answer(_params: JSON) -> JSON:
        return {"action": "accept", "content": {"name": "Grace"}}

    async with connect(build(), elicitation=answer) as client:
        result = await client.call_tool("greet")
    assert result["content"] == [text("Hello, Grace!")]


async def test_the_server_can_be_configured_not_to_name_itself_in_results() -> None:
    server = build()
    server.identify = False
    async with raw_client(server) as raw:
        result = (await raw.call("tools/list"))["result"]
    assert result["resultType"] == "complete" and META + "serverInfo" not in result.get("_meta", {})


async def test_a_tool_reading_a_missing_resource_never_emits_32002_in_2026() -> None:
    # basic "Error Codes": implementations of 2026-07-28 MUST NOT emit -32002, whoever raises it.
    server = build()

    @server.tool()
    async def peek(ctx: Context) -> str:
        return str(await ctx.read_resource("test://missing"))

    async with raw_client(server) as raw:
        reply = await raw.call("tools/call", {"name": "peek"})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"] == {"uri": "test://missing"}
