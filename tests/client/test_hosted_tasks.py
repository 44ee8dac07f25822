"""Tasks the client hosts (2025-11-25 tasks utility, client as the receiver): mcpkit's server asks its
sampling and elicitation as tasks (`ctx.sample(..., as_task=True)`), mcpkit's client (`tasks=True`)
answers with CreateTaskResult, runs its handler in the background and serves tasks/get, tasks/result,
tasks/list and tasks/cancel. In memory and over Streamable HTTP; every message both sides send is checked
against the 2025-11-25 schema. Tests that need a raw request the server's API would not send use the
server handler's own session (`ctx.asker.ask`), so both peers stay real."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import peers
from conftest import requirement
from mcpkit import Context, Server
from mcpkit.client import Client
from mcpkit.client.hosted_tasks import TaskHost
from mcpkit.protocol.errors import MCPError, RemoteError
from mcpkit.protocol.stateless import request_meta
from mcpkit.runtime.stream import memory_pair
from mcpkit.transports.http_client import open_http_stream
from mcpkit.transports.http_server import StreamableHTTPApp
from spec_schema import CheckedStream, available, problems

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not available("2025-11-25"), reason="needs ../shared/spec beside the checkout"),
]
V = "2025-11-25"
JSON = dict[str, Any]
Script = Callable[[Context], Awaitable[str]]
RELATED = "io.modelcontextprotocol/related-task"
ASK_SAMPLE: JSON = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 9}
ASK_ELICIT: JSON = {"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}


def build(script: Script | None = None) -> Server:
    server = Server("client-tasks")

    @server.tool()
    async def poem(ctx: Context, topic: str) -> str:
        result = await ctx.sample(f"a poem about {topic}", as_task=60_000)
        assert RELATED not in result.get("_meta", {})  # the ordinary result, as a plain request answers
        return str(result["content"]["text"])

    @server.tool()
    async def confirm(ctx: Context) -> str:
        answer = await ctx.elicit(
            "ok?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, as_task=True
        )
        return f"{answer.action} {answer.content}"

    @server.tool()
    async def declared(ctx: Context) -> str:
        return repr(ctx.client_capabilities.get("tasks"))

    @server.tool()
    async def scripted(ctx: Context) -> str:
        assert script is not None
        return await script(ctx)

    return server


async def sample(params: JSON) -> JSON:
    assert "task" not in params  # the handler sees the plain request
    text = params["messages"][0]["content"]["text"]
    return {"role": "assistant", "content": {"type": "text", "text": f"~ {text} ~"}, "model": "m"}


async def elicit(_params: JSON) -> JSON:
    return {"action": "accept", "content": {"ok": True}}


class Recorded(CheckedStream):
    """A CheckedStream that keeps what its end sent."""

    def __init__(self, inner: Any, *, server: bool) -> None:
        super().__init__(inner, V, server=server)
        self.sent: list[JSON] = []

    async def send(self, out: Any) -> None:
        import orjson

        self.sent.append(orjson.loads(out.data))
        await super().send(out)


@asynccontextmanager
async def pair(server: Server, **options: Any) -> AsyncIterator[tuple[Client, Recorded, Recorded]]:
    """`server` and a 2025-11-25 Client in memory, every message either sends checked against the schema."""
    client_end, server_end = memory_pair()
    client_side, server_side = Recorded(client_end, server=False), Recorded(server_end, server=True)
    options = {"sampling": sample, "elicitation": elicit, "tasks": True, **options}
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_side)
        async with Client(client_side, era="handshake", protocol_version=V, **options) as client:
            yield client, client_side, server_side
        await client_end.aclose()
        tg.cancel_scope.cancel()
    assert client_side.failures == [] and server_side.failures == []


def text(result: JSON) -> str:
    assert result.get("isError") is not True, result
    return str(result["content"][0]["text"])


def valid(definition: str, instance: JSON) -> JSON:
    assert problems(V, definition, instance) == []
    return instance


@requirement("tasks-client-declare")
@requirement("tasks-client-result")
async def test_sampling_and_elicitation_asked_as_tasks_come_back_as_their_results() -> None:
    async with pair(build()) as (client, client_side, server_side):
        assert text(await client.call_tool("poem", {"topic": "tides"})) == "~ a poem about tides ~"
        assert text(await client.call_tool("confirm")) == "accept {'ok': True}"
        declared = text(await client.call_tool("declared"))
    assert declared == repr(
        {
            "list": {},
            "cancel": {},
            "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
        }
    )
    asked = [
        m for m in server_side.sent if m.get("method") in ("sampling/createMessage", "elicitation/create")
    ]
    assert [m["params"]["task"] for m in asked] == [{"ttl": 60_000}, {}]
    answers = {m["id"]: m for m in client_side.sent if "result" in m or "error" in m}
    created = [answers[m["id"]]["result"] for m in asked]
    assert all(set(c) == {"task"} and c["task"]["status"] == "working" for c in created)  # at once, no result
    fetched = [m for m in server_side.sent if m.get("method") == "tasks/result"]
    assert [m["params"]["taskId"] for m in fetched] == [c["task"]["taskId"] for c in created]
    payloads = [answers[m["id"]]["result"] for m in fetched]
    assert payloads[0]["_meta"][RELATED] == {"taskId": created[0]["task"]["taskId"]}
    valid("CreateMessageResult", payloads[0])
    valid("ElicitResult", payloads[1])


@requirement("tasks-client-ttl")
@requirement("tasks-client-list")
async def test_the_ttl_is_capped_and_reported_and_every_task_is_listed_page_by_page() -> None:
    seen: dict[str, Any] = {}

    async def script(ctx: Context) -> str:
        ids = []
        for _ in range(3):
            created = await ctx.asker.ask("sampling/createMessage", {**ASK_SAMPLE, "task": {"ttl": 10**12}})
            seen.setdefault("created", created)
            ids.append(created["task"]["taskId"])
        seen["get"] = await ctx.asker.ask("tasks/get", {"taskId": ids[0]})
        listed, cursor = [], None
        while True:
            page = await ctx.asker.ask("tasks/list", {"cursor": cursor} if cursor else {})
            valid("ListTasksResult", page)
            listed += [t["taskId"] for t in page["tasks"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        seen["listed"], seen["ids"] = listed, ids
        return "done"

    host = TaskHost(max_ttl_ms=5_000, page_size=2)
    async with pair(build(script), tasks=host) as (client, _, _):
        assert text(await client.call_tool("scripted")) == "done"
    assert seen["created"]["task"]["ttl"] == 5_000 and seen["get"]["ttl"] == 5_000
    task = valid("GetTaskResult", seen["get"])
    assert {"createdAt", "lastUpdatedAt", "pollInterval"} <= set(task) and task["taskId"] == seen["ids"][0]
    assert seen["listed"] == seen["ids"]


@requirement("tasks-client-unknown-id")
async def test_an_unknown_task_id_or_cursor_is_32602_and_disturbs_nothing() -> None:
    async def script(ctx: Context) -> str:
        for method, params in (
            ("tasks/get", {"taskId": "nope"}),
            ("tasks/result", {"taskId": "nope"}),
            ("tasks/cancel", {"taskId": "nope"}),
            ("tasks/get", {"taskId": ""}),
            ("tasks/list", {"cursor": "not-ours"}),
        ):
            with pytest.raises(RemoteError) as refused:
                await ctx.asker.ask(method, params)
            assert refused.value.code == -32602, (method, refused.value)
        return "done"

    async with pair(build(script)) as (client, _, _):
        assert text(await client.call_tool("scripted")) == "done"
        assert text(await client.call_tool("poem", {"topic": "after"})) == "~ a poem about after ~"


@requirement("tasks-client-cancel")
async def test_cancel_stops_the_handler_a_cancelled_task_stays_cancelled_and_a_terminal_one_is_32602() -> (
    None
):
    started, stopped, release = anyio.Event(), anyio.Event(), anyio.Event()

    async def slow_sample(_params: JSON) -> JSON:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()  # reached only by cancellation
        raise AssertionError("unreachable")

    async def stubborn_elicit(_params: JSON) -> JSON:
        with anyio.CancelScope(shield=True):  # carries on to completion after the cancel
            await release.wait()
        return {"action": "accept", "content": {}}

    outcome: dict[str, Any] = {}

    async def script(ctx: Context) -> str:
        task = (await ctx.asker.ask("sampling/createMessage", {**ASK_SAMPLE, "task": {}}))["task"]
        await started.wait()
        outcome["cancelled"] = await ctx.asker.ask("tasks/cancel", {"taskId": task["taskId"]})
        await stopped.wait()  # the handler itself was cancelled
        with pytest.raises(RemoteError) as again:
            await ctx.asker.ask("tasks/cancel", {"taskId": task["taskId"]})
        outcome["again"] = again.value.code
        other = (await ctx.asker.ask("elicitation/create", {**ASK_ELICIT, "task": {}}))["task"]
        await ctx.asker.ask("tasks/cancel", {"taskId": other["taskId"]})
        release.set()
        with pytest.raises(RemoteError):
            await ctx.asker.ask("tasks/result", {"taskId": other["taskId"]})  # cancelled: no result
        outcome["other"] = await ctx.asker.ask("tasks/get", {"taskId": other["taskId"]})
        return "done"

    async with pair(build(script), sampling=slow_sample, elicitation=stubborn_elicit) as (client, _, _):
        with anyio.fail_after(10):  # a guard against a hang, not a timing assertion
            assert text(await client.call_tool("scripted")) == "done"
    assert valid("CancelTaskResult", outcome["cancelled"])["status"] == "cancelled"
    assert stopped.is_set() and outcome["again"] == -32602
    assert outcome["other"]["status"] == "cancelled"


async def test_cancelling_the_servers_wait_cancels_the_clients_task_and_its_handler() -> None:
    started, stopped = anyio.Event(), anyio.Event()

    async def slow_sample(_params: JSON) -> JSON:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")

    async with pair(build(), sampling=slow_sample) as (client, _, server_side):
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "poem", {"topic": "never"})
                await started.wait()
                tg.cancel_scope.cancel()  # the client gives up on tools/call: the server's ask is cancelled
            await stopped.wait()
    assert any(m.get("method") == "tasks/cancel" for m in server_side.sent)


async def test_a_handlers_error_is_what_tasks_result_and_the_servers_ask_end_with() -> None:
    async def refuse(_params: JSON) -> JSON:
        raise MCPError(-1, "User rejected sampling request")

    async with pair(build(), sampling=refuse) as (client, client_side, server_side):
        result = await client.call_tool("poem", {"topic": "no"})
    assert result["isError"] is True and "User rejected sampling request" in result["content"][0]["text"]
    fetched = next(m for m in server_side.sent if m.get("method") == "tasks/result")
    answer = next(m for m in client_side.sent if m.get("id") == fetched["id"] and "method" not in m)
    assert answer["error"]["code"] == -1


@requirement("tasks-client-undeclared-plain")
async def test_without_the_capability_a_task_augmented_request_is_answered_plainly() -> None:
    async def script(ctx: Context) -> str:
        if ctx.client_capabilities.get("tasks"):  # declared for sampling only: elicitation is plain
            answer = await ctx.asker.ask("elicitation/create", {**ASK_ELICIT, "task": {}})
            assert answer == {"action": "accept", "content": {"ok": True}}, answer
        else:
            answer = await ctx.asker.ask("sampling/createMessage", {**ASK_SAMPLE, "task": {"ttl": 1000}})
            assert "task" not in answer and answer["role"] == "assistant", answer
        return "done"

    async with pair(build(script), tasks=False) as (client, _, server_side):
        assert text(await client.call_tool("scripted")) == "done"
        assert text(await client.call_tool("poem", {"topic": "plain"})) == "~ a poem about plain ~"
    asked = [m for m in server_side.sent if m.get("method") == "sampling/createMessage"]
    assert "task" not in asked[-1]["params"]  # ctx.sample(as_task=...) fell back to the plain request
    sampling_only = TaskHost(requests=("sampling/createMessage",))
    async with pair(build(script), tasks=sampling_only) as (client, _, _):
        assert eval(text(await client.call_tool("declared")))["requests"] == {
            "sampling": {"createMessage": {}}
        }
        assert text(await client.call_tool("scripted")) == "done"


async def test_an_earlier_version_declares_no_tasks_and_asks_plainly() -> None:
    client_end, server_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(build().serve, server_end)
        options: JSON = {"sampling": sample, "tasks": True}
        async with Client(client_end, era="handshake", protocol_version="2025-06-18", **options) as client:
            assert text(await client.call_tool("declared")) == "None"
            assert text(await client.call_tool("poem", {"topic": "old"})) == "~ a poem about old ~"
        await client_end.aclose()
        tg.cancel_scope.cancel()


async def test_over_streamable_http_the_client_hosts_the_servers_tasks() -> None:
    async with peers.serving(StreamableHTTPApp(build())) as url, open_http_stream(url) as stream:
        checked = CheckedStream(stream, V, server=False)
        options: JSON = {"sampling": sample, "elicitation": elicit, "tasks": True}
        async with Client(checked, era="handshake", protocol_version=V, **options) as client:
            assert text(await client.call_tool("poem", {"topic": "wires"})) == "~ a poem about wires ~"
            assert text(await client.call_tool("confirm")) == "accept {'ok': True}"
    assert checked.checked >= 6 and checked.failures == []


def test_task_host_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TaskHost(max_ttl_ms=0)


async def test_a_task_past_its_ttl_is_forgotten() -> None:
    async def script(ctx: Context) -> str:
        task = (await ctx.asker.ask("sampling/createMessage", {**ASK_SAMPLE, "task": {}}))["task"]
        assert task["ttl"] == 1
        await anyio.sleep(0.05)  # well past the 1 ms ttl
        with pytest.raises(RemoteError) as gone:
            await ctx.asker.ask("tasks/result", {"taskId": task["taskId"]})
        assert gone.value.code == -32602
        listed = await ctx.asker.ask("tasks/list", {})
        assert listed["tasks"] == []
        return "done"

    async with pair(build(script), tasks=TaskHost(max_ttl_ms=1)) as (client, _, _):
        assert text(await client.call_tool("scripted")) == "done"


def test_the_stateless_era_declares_no_tasks_capability() -> None:
    meta = request_meta("2026-07-28", {"sampling": {}, "tasks": {"list": {}}}, {"name": "c", "version": "1"})
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"sampling": {}}
