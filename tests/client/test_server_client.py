"""Server and Client end to end through the in-memory pair: real JSON crosses, no process."""

from __future__ import annotations

import threading
from typing import Annotated, Any

import anyio
import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from mcpkit import CapabilityError, Context, MCPError, RemoteError, Server
from mcpkit.client.client import Client
from mcpkit.runtime.stream import memory_pair
from mcpkit.testing import connect as connect_any_era
from spec_schema import CheckedStream, available


def connect(server: Server, **options: Any) -> Any:
    """This file is the handshake era end to end; test_stateless_client.py beside it is the 2026-07-28 one."""
    options.setdefault("era", "handshake")
    return connect_any_era(server, **options)


pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
requirement = pytest.mark.requirement


class Point(TypedDict):
    x: int
    y: int


class Order(BaseModel):
    sku: str
    qty: int = 1


def make_server(**options: Any) -> Server:
    server = Server("test", "1.0", **options)
    started = anyio.Event()
    server.started = started  # type: ignore[attr-defined]
    server.cancelled = []  # type: ignore[attr-defined]

    @server.tool()
    def add(a: int, b: Annotated[int, "second addend"] = 2) -> int:
        """Add."""
        return a + b

    @server.tool()
    def which_thread() -> str:
        return "main" if threading.current_thread() is threading.main_thread() else "worker"

    @server.tool()
    def place(order: Order, where: Point) -> dict[str, Any]:
        return {"sku": order.sku, "qty": order.qty, "x": where["x"]}

    @server.tool()
    def boom() -> str:
        raise RuntimeError("disk on fire")

    @server.tool()
    async def wait(ctx: Context) -> str:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            server.cancelled.append(ctx.request_id)  # type: ignore[attr-defined]
            raise
        return "done"

    @server.tool()
    async def ticking(ctx: Context, steps: int = 3, pause: float = 0.05) -> str:
        for i in range(steps):
            await anyio.sleep(pause)
            await ctx.report_progress(i + 1, steps)
        return "ticked"

    @server.tool()
    async def ask_llm(ctx: Context) -> str:
        result = await ctx.sample("hi", max_tokens=5)
        return str(result["content"]["text"])

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        answer = await ctx.elicit(
            "name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        )
        return f"{answer.action}:{(answer.content or {}).get('name')}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        return ",".join(r["uri"] for r in await ctx.list_roots())

    server.add_tool(
        lambda **kw: f"raw {kw['n']}",
        name="raw",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    )

    @server.resource("mem://static", mime_type="text/plain")
    def static() -> str:
        return "hello"

    @server.resource("mem://items/{item_id}")
    def item(item_id: int) -> bytes:
        return bytes([item_id])

    @server.prompt()
    def greet(name: str, tone: str = "warm") -> str:
        return f"{tone} hello {name}"

    @server.completion(prompt="greet", argument="tone")
    def tones(value: str, context: dict[str, str]) -> list[str]:
        return [t for t in ("warm", "wry", "cold") if t.startswith(value)]

    return server


async def test_tools_list_returns_schemas_from_type_hints() -> None:
    async with connect(make_server()) as client:
        tools = {t["name"]: t for t in await client.list_all_tools()}
    assert tools["add"]["inputSchema"] == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer", "default": 2, "description": "second addend"},
        },
        "required": ["a"],
    }
    assert tools["add"]["description"] == "Add."
    assert tools["add"]["outputSchema"]["properties"]["result"] == {"type": "integer"}


@requirement("pagination-cursor")
async def test_lists_paginate_with_opaque_cursors() -> None:
    async with connect(make_server(page_size=3)) as client:
        first = await client.list_tools()
        assert len(first["tools"]) == 3 and first["nextCursor"]
        all_tools = await client.list_all_tools()
    assert len(all_tools) == len(make_server().tools)
    assert len({t["name"] for t in all_tools}) == len(all_tools)


@requirement("pagination-invalid-cursor")
async def test_an_invalid_cursor_is_invalid_params() -> None:
    async with connect(make_server(page_size=3)) as client:
        with pytest.raises(RemoteError) as info:
            await client.list_tools("not-a-cursor")
    assert info.value.code == -32602


async def test_structured_output_comes_with_a_text_block() -> None:
    async with connect(make_server()) as client:
        await client.list_tools()
        result = await client.call_tool("add", {"a": 40})
    assert result["structuredContent"] == {"result": 42}
    assert result["content"] == [{"type": "text", "text": '{"result":42}'}]


async def test_pydantic_and_typeddict_arguments_are_validated_and_converted() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("place", {"order": {"sku": "A1"}, "where": {"x": 3, "y": 4}})
    assert result["structuredContent"] == {"sku": "A1", "qty": 1, "x": 3}


@requirement("tools-input-validation-error")
async def test_arguments_that_break_the_schema_are_a_tool_error_naming_the_field() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("add", {"a": "forty"})
    assert result["isError"] is True
    assert "'a'" in result["content"][0]["text"]


async def test_a_raw_schema_tool_is_validated_with_json_schema() -> None:
    async with connect(make_server()) as client:
        ok = await client.call_tool("raw", {"n": 3})
        bad = await client.call_tool("raw", {"n": "x"})
    assert ok["content"][0]["text"] == "raw 3"
    assert bad["isError"] is True and "'n'" in bad["content"][0]["text"]


@requirement("tools-execution-error")
async def test_an_exception_in_a_tool_is_an_is_error_result_without_traceback() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("boom")
    assert result["isError"] is True
    assert "disk on fire" in result["content"][0]["text"]
    assert "Traceback" not in result["content"][0]["text"]


@requirement("tools-unknown")
async def test_an_unknown_tool_is_invalid_params() -> None:
    async with connect(make_server()) as client:
        with pytest.raises(RemoteError) as info:
            await client.call_tool("nope")
    assert info.value.code == -32602 and "nope" in info.value.message


async def test_sync_tools_run_off_the_event_loop() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("which_thread")
    assert result["content"][0]["text"] == "worker"


async def test_older_versions_get_no_structured_content_or_output_schema() -> None:
    async with connect(make_server(), protocol_version="2025-03-26") as client:
        assert client.protocol == "2025-03-26"
        tools = {t["name"]: t for t in await client.list_all_tools()}
        result = await client.call_tool("add", {"a": 1})
    assert "outputSchema" not in tools["add"]
    assert "structuredContent" not in result


@requirement("cancel-stops-handler")
async def test_cancelling_a_call_stops_the_handler_task() -> None:
    server = make_server()
    async with connect(server) as client:
        with anyio.move_on_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "wait")
                await server.started.wait()  # type: ignore[attr-defined]
                tg.cancel_scope.cancel()
        with anyio.fail_after(5):
            while not server.cancelled:  # type: ignore[attr-defined]
                await anyio.sleep(0.01)
        assert (await client.call_tool("add", {"a": 1}))["structuredContent"] == {"result": 3}


@requirement("timeout-cancel")
async def test_a_timed_out_request_raises_32001_and_cancels_on_the_server() -> None:
    server = make_server()
    async with connect(server, timeout=0.2) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("wait")
        assert info.value.code == -32001
        with anyio.fail_after(5):
            while not server.cancelled:  # type: ignore[attr-defined]
                await anyio.sleep(0.01)


@requirement("timeout-progress-reset")
async def test_progress_resets_the_timeout_but_not_past_the_hard_cap() -> None:
    seen: list[float] = []
    async with connect(make_server(), timeout=0.3) as client:
        result = await client.call_tool(
            "ticking", {"steps": 8, "pause": 0.1}, on_progress=lambda p, t, m: seen.append(p)
        )
        assert result["content"][0]["text"] == "ticked"
        assert seen == [1, 2, 3, 4, 5, 6, 7, 8]
    async with connect(make_server(), timeout=0.3, max_timeout=0.35) as client:
        with pytest.raises(MCPError) as info:
            await client.call_tool("ticking", {"steps": 8, "pause": 0.1}, on_progress=lambda p, t, m: None)
    assert info.value.code == -32001


@requirement("sampling-capability")
async def test_sampling_without_the_client_capability_fails_locally_as_a_tool_error() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("ask_llm")
    assert result["isError"] is True


async def test_context_sample_raises_capability_error_before_sending() -> None:
    server = Server("s")
    raised: list[BaseException] = []

    @server.tool()
    async def probe(ctx: Context) -> str:
        try:
            await ctx.sample("x")
        except CapabilityError as exc:
            raised.append(exc)
        return "ok"

    async with connect(server) as client:
        await client.call_tool("probe")
    assert raised and "sampling" in str(raised[0])


async def test_sampling_elicitation_and_roots_are_answered_by_client_handlers() -> None:
    def sample(params: dict[str, Any]) -> dict[str, Any]:
        assert params["maxTokens"] == 5
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}

    async with connect(
        make_server(),
        sampling=sample,
        elicitation=lambda p: {"action": "accept", "content": {"name": "Ada"}},
        roots=[{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}],
    ) as client:
        assert (await client.call_tool("ask_llm"))["content"][0]["text"] == "sampled"
        assert (await client.call_tool("ask_user"))["content"][0]["text"] == "accept:Ada"
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///a,file:///b"


@requirement("elicitation-schema-check")
async def test_an_elicitation_answer_that_breaks_the_schema_is_rejected() -> None:
    async with connect(
        make_server(), elicitation=lambda p: {"action": "accept", "content": {"name": 5}}
    ) as client:
        result = await client.call_tool("ask_user")
    assert result["isError"] is True


async def test_a_declined_elicitation_carries_no_content() -> None:
    async with connect(make_server(), elicitation=lambda p: {"action": "decline"}) as client:
        assert (await client.call_tool("ask_user"))["content"][0]["text"] == "decline:None"


async def test_resources_read_text_and_base64_blobs_and_templates() -> None:
    async with connect(make_server()) as client:
        text = await client.read_resource("mem://static")
        blob = await client.read_resource("mem://items/65")
        templates = await client.list_all_resource_templates()
    assert text["contents"] == [{"uri": "mem://static", "mimeType": "text/plain", "text": "hello"}]
    assert blob["contents"][0]["blob"] == "QQ=="
    assert templates[0]["uriTemplate"] == "mem://items/{item_id}"


@requirement("resources-not-found")
async def test_an_unknown_resource_is_32002_with_the_uri() -> None:
    async with connect(make_server()) as client:
        with pytest.raises(RemoteError) as info:
            await client.read_resource("mem://nothing")
    assert info.value.code == -32002 and info.value.data == {"uri": "mem://nothing"}


async def test_subscribers_get_resource_updated_and_unsubscribed_ones_do_not() -> None:
    server = make_server()
    notes: list[tuple[str, dict[str, Any]]] = []
    async with connect(server, on_notification=lambda m, p: notes.append((m, p))) as client:
        await client.subscribe("mem://items/1")
        await server.notify_resource_updated("mem://items/1")
        await server.notify_resource_updated("mem://static")
        await client.unsubscribe("mem://items/1")
        await server.notify_resource_updated("mem://items/1")
        await client.ping()
        await anyio.sleep(0.05)
    assert notes == [("notifications/resources/updated", {"uri": "mem://items/1"})]


async def test_adding_a_tool_while_connected_sends_list_changed() -> None:
    server = make_server()
    notes: list[str] = []
    async with connect(server, on_notification=lambda m, p: notes.append(m)) as client:
        server.add_tool(lambda: "new", name="fresh")
        with anyio.fail_after(5):
            while "notifications/tools/list_changed" not in notes:
                await anyio.sleep(0.01)
        assert "fresh" in {t["name"] for t in await client.list_all_tools()}


@requirement("prompts-missing-argument")
async def test_prompts_get_validates_required_arguments() -> None:
    async with connect(make_server()) as client:
        prompt = await client.get_prompt("greet", {"name": "Bo"})
        with pytest.raises(RemoteError) as missing:
            await client.get_prompt("greet", {})
        with pytest.raises(RemoteError) as unknown:
            await client.get_prompt("nope")
        listed = await client.list_all_prompts()
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text", "text": "warm hello Bo"}}]
    assert missing.value.code == -32602 and "name" in missing.value.message
    assert unknown.value.code == -32602
    assert listed[0]["arguments"] == [{"name": "name", "required": True}, {"name": "tone", "required": False}]


async def test_completion_offers_values_for_a_prompt_argument() -> None:
    async with connect(make_server()) as client:
        completion = await client.complete({"type": "ref/prompt", "name": "greet"}, "tone", "w")
    assert completion == {"values": ["warm", "wry"], "total": 2, "hasMore": False}


async def test_log_messages_respect_the_clients_level() -> None:
    server = Server("logs")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, level)
        return "ok"

    got: list[str] = []
    async with connect(server, on_log=lambda p: got.append(p["level"])) as client:
        await client.set_logging_level("warning")
        await client.call_tool("chatty")
        with pytest.raises(RemoteError) as info:
            await client.set_logging_level("loud")
        await anyio.sleep(0.05)
    assert got == ["warning", "error"]
    assert info.value.code == -32602


async def test_ping_works_in_both_directions() -> None:
    server = Server("p")

    @server.tool()
    async def ping_back(ctx: Context) -> str:
        await ctx.session.request("ping")
        return "pong"

    async with connect(server) as client:
        await client.ping()
        assert (await client.call_tool("ping_back"))["content"][0]["text"] == "pong"


async def test_the_server_hears_roots_list_changed_and_can_list_roots_again() -> None:
    server = Server("roots")
    heard: list[list[str]] = []

    @server.tool()
    def noop() -> str:
        return ""

    @server.on_roots_changed
    async def refresh(session: Any) -> None:
        result = await session.request("roots/list")
        heard.append([r["uri"] for r in result["roots"]])

    current = [{"uri": "file:///one"}]
    async with connect(server, roots=lambda: current) as client:
        current = [{"uri": "file:///two"}]
        await client.roots_changed()
        with anyio.fail_after(5):
            while not heard:
                await anyio.sleep(0.01)
    assert heard == [["file:///two"]]


async def test_request_meta_reaches_the_handler_untouched() -> None:
    server = Server("meta")
    seen: list[dict[str, Any]] = []

    @server.tool()
    def look(ctx: Context) -> str:
        seen.append(ctx.meta)
        return "ok"

    async with connect(server) as client:
        await client.request(
            "tools/call", {"name": "look", "arguments": {}, "_meta": {"trace": {"id": [1, 2]}}}
        )
    assert seen == [{"trace": {"id": [1, 2]}}]


async def test_url_elicitation_and_its_completion_notification() -> None:
    from everything import server as everything

    asked: list[dict[str, Any]] = []
    notes: list[tuple[str, dict[str, Any]]] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept"}

    async with connect(
        everything,
        elicitation=answer,
        elicitation_url=True,
        on_notification=lambda m, p: notes.append((m, p)),
    ) as client:
        result = await client.call_tool("connect_account", {"service": "git"})
        await client.ping()
        await anyio.sleep(0.05)
    assert result["content"][0]["text"] == "URL elicitation answered: accept"
    assert asked[0]["mode"] == "url" and asked[0]["url"] == "https://example.com/connect/git"
    assert ("notifications/elicitation/complete", {"elicitationId": "connect-git"}) in notes


async def test_url_elicitation_is_refused_locally_without_the_url_capability() -> None:
    from everything import server as everything

    async with connect(everything, elicitation=lambda p: {"action": "accept"}) as client:
        result = await client.call_tool("connect_account", {"service": "git"})
    assert result["isError"] is True and "elicitation.url" in result["content"][0]["text"]


async def test_tools_in_sampling_need_2025_11_25_and_the_tools_capability() -> None:
    server = Server("sampler")

    @server.tool()
    async def plan(ctx: Context) -> str:
        tools = [{"name": "search", "inputSchema": {"type": "object"}}]
        result = await ctx.sample("find it", tools=tools, tool_choice={"mode": "auto"})
        return str(result["stopReason"])

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        assert params["tools"][0]["name"] == "search"
        return {
            "role": "assistant",
            "model": "m",
            "stopReason": "toolUse",
            "content": [{"type": "tool_use", "id": "1", "name": "search", "input": {}}],
        }

    async with connect(server, sampling=sample, sampling_tools=True) as client:
        assert (await client.call_tool("plan"))["content"][0]["text"] == "toolUse"
    async with connect(server, sampling=sample) as client:
        assert (await client.call_tool("plan"))["isError"] is True


async def test_every_content_type_and_annotations_cross_unchanged() -> None:
    from everything import server as everything

    async with connect(everything) as client:
        result = await client.call_tool("media")
        readme = await client.list_all_resources()
    kinds = [block["type"] for block in result["content"]]
    assert kinds == ["text", "image", "audio", "resource_link", "resource"]
    assert result["content"][0]["annotations"] == {"audience": ["user"], "priority": 0.9}
    assert result["content"][1]["mimeType"] == "image/png" and result["content"][1]["data"].startswith(
        "iVBOR"
    )
    assert result["content"][4]["_meta"] == {"note": "passed through"}
    first = next(r for r in readme if r["uri"] == "demo://readme")
    assert first["annotations"]["lastModified"] == "2026-01-01T00:00:00Z"


async def test_content_blocks_from_a_structured_tool_keep_their_structured_content() -> None:
    server = Server("blocks")

    @server.tool()
    def blocks() -> list[dict[str, Any]]:
        return [{"type": "text", "text": "hi"}]

    async with connect(server) as client:
        await client.list_tools()
        result = await client.call_tool("blocks")
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result["structuredContent"] == {"result": [{"type": "text", "text": "hi"}]}


@pytest.mark.skipif(not available("2025-11-25"), reason="needs ../shared/spec beside the checkout")
async def test_every_message_both_sides_send_satisfies_the_2025_11_25_schema() -> None:
    server = make_server()
    client_end, server_end = memory_pair()
    client_side = CheckedStream(client_end, "2025-11-25", server=False)
    server_side = CheckedStream(server_end, "2025-11-25")

    async def elicit(_params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_side)
        async with Client(client_side, era="handshake", elicitation=elicit, roots=[]) as client:
            await client.ping()
            await client.list_all_tools()
            await client.list_all_resources()
            await client.list_all_prompts()
            await client.call_tool("add", {"a": 1})
            await client.call_tool("ticking", {"steps": 2, "pause": 0}, on_progress=lambda p, t, m: None)
            await client.call_tool("ask_user")
            await client.call_tool("roots")
            await client.call_tool("add", {"a": "not a number"})  # an isError result
        await client_end.aclose()
        tg.cancel_scope.cancel()
    assert client_side.checked >= 6 and server_side.checked >= 6
    assert client_side.failures == [] and server_side.failures == []
