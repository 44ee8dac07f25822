"""Interop over stdio with the official MCP Python SDK (`mcp` 2.x), in both directions.

Part 1: the SDK's `stdio_client` + `ClientSession` against mcpkit's `examples/everything.py`.
Part 2: mcpkit's `connect_stdio` client against `tests/interop/sdk_server.py` (the SDK's `MCPServer`).
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client, types  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from pydantic import FileUrl  # noqa: E402

from mcpkit.client import connect_stdio  # noqa: E402
from mcpkit.protocol.errors import RemoteError  # noqa: E402

pytestmark = [
    pytest.mark.interop,
    # The SDK flags sampling/roots/logging/subscribe deprecated for 2026-07-28; at 2025-11-25 they are live.
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "examples" / "everything.py"
SDK_SERVER = Path(__file__).resolve().parent / "sdk_server.py"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}
TIMEOUT = 10


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# ---------------------------------------------------------------------------------------------
# Part 1: official SDK client -> mcpkit server (examples/everything.py)
# ---------------------------------------------------------------------------------------------


@dataclass
class Recorder:
    """What the SDK client's callbacks saw, and how they should answer."""

    sampling_requests: list[types.CreateMessageRequestParams] = field(default_factory=list)
    elicitations: list[types.ElicitRequestParams] = field(default_factory=list)
    elicit_answer: types.ElicitResult = field(
        default_factory=lambda: types.ElicitResult(action="accept", content={"guests": 4, "confirm": True})
    )
    logs: list[types.LoggingMessageNotificationParams] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    roots_calls: int = 0

    async def sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling_requests.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="A one-line summary from the SDK."),
            model="sdk-test-model",
            stop_reason="endTurn",
        )

    async def elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitations.append(params)
        return self.elicit_answer

    async def list_roots(self, context: Any) -> types.ListRootsResult:
        self.roots_calls += 1
        return types.ListRootsResult(
            roots=[
                types.Root(uri=FileUrl("file:///work/project-a"), name="a"),
                types.Root(uri=FileUrl("file:///work/project-b"), name="b"),
            ]
        )

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def message_handler(self, message: Any) -> None:
        self.messages.append(message)


@asynccontextmanager
async def sdk_session(recorder: Recorder | None = None) -> AsyncIterator[tuple[ClientSession, Recorder]]:
    rec = recorder or Recorder()
    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING)], env=ENV, cwd=str(REPO))
    with tempfile.TemporaryFile("w+") as errlog, anyio.fail_after(TIMEOUT):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read,
                write,
                read_timeout_seconds=TIMEOUT,
                sampling_callback=rec.sampling,
                elicitation_callback=rec.elicitation,
                list_roots_callback=rec.list_roots,
                logging_callback=rec.logging,
                message_handler=rec.message_handler,
            ) as session,
        ):
            await session.initialize()
            yield session, rec


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@pytest.mark.anyio
async def test_sdk_client_negotiates_2025_11_25_and_sees_mcpkit_server_info() -> None:
    async with sdk_session() as (session, _):
        result = session.initialize_result
        assert result is not None
        assert result.protocol_version == "2025-11-25"
        assert session.protocol_version == "2025-11-25"
        assert result.server_info.name == "mcpkit-everything"
        assert result.server_info.version == "0.1.0"
        assert result.server_info.title == "mcpkit everything demo"
        assert result.instructions and result.instructions.startswith("A demo server")
        caps = result.capabilities
        assert caps.tools is not None and caps.prompts is not None and caps.logging is not None
        assert caps.resources is not None and caps.resources.subscribe is True
        assert caps.completions is not None


@pytest.mark.anyio
async def test_sdk_client_lists_every_tool_and_add_has_an_output_schema() -> None:
    async with sdk_session() as (session, _):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        expected = {
            "echo", "add", "slow", "summarize", "book_table", "connect_account", "log_levels",
            "list_client_roots", "weather", "media", "fail", "touch",
        }  # fmt: skip
        assert expected <= set(tools)
        add = tools["add"]
        assert add.output_schema is not None
        assert add.output_schema["properties"]["result"]["type"] == "integer"
        assert add.input_schema["required"] == ["a", "b"]
        assert add.title == "Add two integers"
        assert add.annotations is not None and add.annotations.read_only_hint is True


@pytest.mark.anyio
async def test_sdk_client_calls_echo_and_gets_the_text_back() -> None:
    async with sdk_session() as (session, _):
        result = await session.call_tool("echo", {"text": "héllo, interop"})
        assert result.is_error is False
        assert texts(result) == ["héllo, interop"]


@pytest.mark.anyio
async def test_sdk_client_calls_add_and_gets_structured_result_3() -> None:
    async with sdk_session() as (session, _):
        await session.list_tools()  # so the SDK validates structuredContent against outputSchema
        result = await session.call_tool("add", {"a": 1, "b": 2})
        assert result.is_error is False
        assert result.structured_content == {"result": 3}
        assert '"result":3' in texts(result)[0].replace(" ", "")


@pytest.mark.anyio
async def test_sdk_client_calls_weather_and_gets_structured_weather() -> None:
    async with sdk_session() as (session, _):
        await session.list_tools()
        result = await session.call_tool("weather", {"city": "Oslo"})
        assert result.is_error is False
        assert result.structured_content == {"city": "Oslo", "celsius": 21.5, "conditions": "sunny"}


@pytest.mark.anyio
async def test_sdk_client_parses_every_content_type_from_media() -> None:
    # A raw tools/call, so content parsing is tested apart from the SDK's outputSchema check.
    async with sdk_session() as (session, _):
        result = await session.send_request(
            types.CallToolRequest(params=types.CallToolRequestParams(name="media", arguments={})),
            types.CallToolResult,
        )
        kinds = [block.type for block in result.content]
        assert kinds == ["text", "image", "audio", "resource_link", "resource"]
        text, image, audio, link, embedded = result.content
        assert isinstance(text, types.TextContent) and text.text == "Here is everything"
        assert text.annotations is not None and text.annotations.priority == 0.9
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        assert isinstance(audio, types.AudioContent) and audio.mime_type == "audio/wav"
        assert isinstance(link, types.ResourceLink) and str(link.uri) == "demo://readme"
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents)
        assert embedded.resource.text == "inline resource text"


@pytest.mark.anyio
async def test_sdk_client_call_tool_accepts_media_result_after_listing_tools() -> None:
    error: str | None = None
    async with sdk_session() as (session, _):
        await session.list_tools()
        try:
            result = await session.call_tool("media", {})
        except RuntimeError as exc:  # the SDK's own outputSchema check
            error = str(exc)
        else:
            assert [block.type for block in result.content][:3] == ["text", "image", "audio"]
    assert error is None, error


@pytest.mark.anyio
async def test_sdk_client_sees_is_error_true_from_fail() -> None:
    async with sdk_session() as (session, _):
        result = await session.call_tool("fail", {"message": "deliberate"})
        assert result.is_error is True
        assert texts(result) == ["deliberate"]


@pytest.mark.anyio
async def test_sdk_client_gets_is_error_naming_b_when_add_gets_a_string() -> None:
    async with sdk_session() as (session, _):
        result = await session.call_tool("add", {"a": 1, "b": "x"})
        assert result.is_error is True
        message = " ".join(texts(result))
        assert "'b'" in message


@pytest.mark.anyio
async def test_sdk_client_gets_a_protocol_error_for_an_unknown_tool() -> None:
    async with sdk_session() as (session, _):
        with pytest.raises(MCPError) as info:
            await session.call_tool("no_such_tool", {})
        assert info.value.code == types.INVALID_PARAMS
        assert "no_such_tool" in info.value.message


@pytest.mark.anyio
async def test_sdk_client_progress_callback_sees_strictly_increasing_progress_from_slow() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with sdk_session() as (session, _):
        result = await session.call_tool("slow", {"seconds": 0.2}, progress_callback=on_progress)
        assert texts(result) == ["waited 0.2 seconds"]
    values = [p for p, _, _ in seen]
    assert len(values) == 10
    assert all(a < b for a, b in itertools.pairwise(values))
    assert values[-1] == 10
    assert all(total == 10 for _, total, _ in seen)
    assert seen[0][2] == "step 1 of 10"


@pytest.mark.anyio
async def test_sdk_sampling_callback_answers_summarize_and_the_tool_returns_its_text() -> None:
    async with sdk_session() as (session, rec):
        result = await session.call_tool("summarize", {"topic": "jazz"})
        assert result.is_error is False
        assert texts(result) == ["A one-line summary from the SDK."]
    assert len(rec.sampling_requests) == 1
    request = rec.sampling_requests[0]
    assert request.max_tokens == 100
    assert request.system_prompt == "You are terse."
    assert isinstance(request.messages[0].content, types.TextContent)
    assert request.messages[0].content.text == "Summarise jazz in one line."
    assert request.model_preferences is not None and request.model_preferences.hints is not None
    assert request.model_preferences.hints[0].name == "claude"


@pytest.mark.anyio
async def test_sdk_elicitation_callback_accepting_books_the_table() -> None:
    async with sdk_session() as (session, rec):
        result = await session.call_tool("book_table", {"restaurant": "Chez SDK"})
        assert texts(result) == ["Booked Chez SDK for 4."]
    assert len(rec.elicitations) == 1
    params = rec.elicitations[0]
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "Book a table at Chez SDK?"
    schema = params.requested_schema
    assert schema["properties"]["guests"]["type"] == "integer"
    assert schema["properties"]["confirm"]["type"] == "boolean"
    assert set(schema["required"]) == {"guests", "confirm"}


@pytest.mark.anyio
async def test_sdk_elicitation_callback_declining_makes_no_booking() -> None:
    rec = Recorder(elicit_answer=types.ElicitResult(action="decline"))
    async with sdk_session(rec) as (session, _):
        result = await session.call_tool("book_table", {"restaurant": "Chez SDK"})
        assert texts(result) == ["No booking made (decline)."]
    assert len(rec.elicitations) == 1


@pytest.mark.anyio
async def test_sdk_logging_callback_after_set_level_error_gets_only_error_and_above() -> None:
    async with sdk_session() as (session, rec):
        await session.set_logging_level("error")
        result = await session.call_tool("log_levels", {})
        assert texts(result) == ["logged"]
        await anyio.sleep(0.05)
    assert [log.level for log in rec.logs] == ["error", "critical", "alert", "emergency"]
    assert rec.logs[0].logger == "everything"
    assert rec.logs[0].data == {"message": "a error message"}
    teed = [m for m in rec.messages if isinstance(m, types.LoggingMessageNotification)]
    assert len(teed) == 4


@pytest.mark.anyio
async def test_sdk_roots_callback_answers_list_client_roots() -> None:
    async with sdk_session() as (session, rec):
        await session.list_tools()
        result = await session.call_tool("list_client_roots", {})
        assert result.is_error is False
        assert result.structured_content == {"result": ["file:///work/project-a", "file:///work/project-b"]}
    assert rec.roots_calls == 1


@pytest.mark.anyio
async def test_sdk_client_lists_resources_and_templates() -> None:
    async with sdk_session() as (session, _):
        resources = {str(r.uri): r for r in (await session.list_resources()).resources}
        assert set(resources) == {"demo://readme", "demo://pixel"}
        readme = resources["demo://readme"]
        assert readme.mime_type == "text/markdown" and readme.title == "Read me"
        assert readme.annotations is not None and readme.annotations.priority == 0.5
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["demo://notes/{note_id}"]
        assert templates[0].mime_type == "text/plain"


@pytest.mark.anyio
async def test_sdk_client_reads_text_blob_and_templated_resources() -> None:
    import base64

    async with sdk_session() as (session, _):
        text = (await session.read_resource("demo://readme")).contents
        assert len(text) == 1 and isinstance(text[0], types.TextResourceContents)
        assert text[0].text == "# mcpkit everything\n\nA static resource."
        blob = (await session.read_resource("demo://pixel")).contents
        assert len(blob) == 1 and isinstance(blob[0], types.BlobResourceContents)
        assert blob[0].mime_type == "image/png"
        assert base64.b64decode(blob[0].blob).startswith(b"\x89PNG")
        note = (await session.read_resource("demo://notes/7")).contents
        assert isinstance(note[0], types.TextResourceContents) and note[0].text == "Note number 7"


@pytest.mark.anyio
async def test_sdk_client_gets_error_code_32002_for_a_missing_resource() -> None:
    async with sdk_session() as (session, _):
        with pytest.raises(MCPError) as info:
            await session.read_resource("demo://does-not-exist")
        assert info.value.code == -32002
        assert "demo://does-not-exist" in info.value.message


@pytest.mark.anyio
async def test_sdk_client_subscribed_to_readme_receives_resources_updated_after_touch() -> None:
    async with sdk_session() as (session, rec):
        await session.subscribe_resource("demo://readme")
        await session.call_tool("touch", {"uri": "demo://readme"})
        with anyio.fail_after(3):
            while not any(isinstance(m, types.ResourceUpdatedNotification) for m in rec.messages):
                await anyio.sleep(0.02)
        updates = [m for m in rec.messages if isinstance(m, types.ResourceUpdatedNotification)]
        assert [str(u.params.uri) for u in updates] == ["demo://readme"]


@pytest.mark.anyio
async def test_sdk_client_lists_prompts_and_gets_greet() -> None:
    async with sdk_session() as (session, _):
        prompts = {p.name: p for p in (await session.list_prompts()).prompts}
        assert set(prompts) == {"greet", "review_code"}
        args = {a.name: a.required for a in prompts["greet"].arguments or []}
        assert args == {"name": True, "style": False}
        result = await session.get_prompt("greet", {"name": "Ada", "style": "formal"})
        assert len(result.messages) == 1
        assert result.messages[0].role == "user"
        assert isinstance(result.messages[0].content, types.TextContent)
        assert result.messages[0].content.text == "Write a formal greeting for Ada."
        review = await session.get_prompt("review_code", {"code": "x = 1"})
        assert [m.role for m in review.messages] == ["user", "assistant", "user"]
        assert isinstance(review.messages[2].content, types.EmbeddedResource)


@pytest.mark.anyio
async def test_sdk_client_gets_32602_when_a_required_prompt_argument_is_missing() -> None:
    async with sdk_session() as (session, _):
        with pytest.raises(MCPError) as info:
            await session.get_prompt("greet", {})
        assert info.value.code == -32602
        assert "name" in info.value.message


@pytest.mark.anyio
async def test_sdk_client_completes_greet_style_and_note_ids() -> None:
    async with sdk_session() as (session, _):
        style = await session.complete(
            types.PromptReference(type="ref/prompt", name="greet"), {"name": "style", "value": "f"}
        )
        assert style.completion.values == ["friendly", "formal"]
        notes = await session.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="demo://notes/{note_id}"),
            {"name": "note_id", "value": "19"},
        )
        assert notes.completion.values == [
            "19",
            "190",
            "191",
            "192",
            "193",
            "194",
            "195",
            "196",
            "197",
            "198",
            "199",
        ]


@pytest.mark.anyio
async def test_sdk_client_ping_gets_an_empty_result() -> None:
    async with sdk_session() as (session, _):
        result = await session.send_ping()
        assert isinstance(result, types.EmptyResult)
        assert result.model_dump(exclude_none=True, exclude_defaults=True) == {}


# ---------------------------------------------------------------------------------------------
# Part 2: mcpkit client -> official SDK server (tests/interop/sdk_server.py)
# ---------------------------------------------------------------------------------------------


@dataclass
class KitRecorder:
    sampling_requests: list[dict[str, Any]] = field(default_factory=list)
    elicitations: list[dict[str, Any]] = field(default_factory=list)
    elicit_answer: dict[str, Any] = field(
        default_factory=lambda: {"action": "accept", "content": {"guests": 2, "confirm": True}}
    )
    logs: list[dict[str, Any]] = field(default_factory=list)

    def sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sampling_requests.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "mcpkit says hi"},
            "model": "mcpkit-model",
            "stopReason": "endTurn",
        }

    async def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        self.elicitations.append(params)
        return self.elicit_answer

    def on_log(self, params: dict[str, Any]) -> None:
        self.logs.append(params)


ROOTS = [{"uri": "file:///srv/one", "name": "one"}, {"uri": "file:///srv/two", "name": "two"}]


@asynccontextmanager
async def kit_client(recorder: KitRecorder | None = None) -> AsyncIterator[tuple[Any, KitRecorder]]:
    rec = recorder or KitRecorder()
    with anyio.fail_after(TIMEOUT):
        async with connect_stdio(
            [sys.executable, str(SDK_SERVER)],
            env=ENV,
            cwd=str(REPO),
            sampling=rec.sampling,
            elicitation=rec.elicitation,
            roots=ROOTS,
            on_log=rec.on_log,
            timeout=TIMEOUT,
            # The SDK server's tools ask the client mid-call, which only a session can carry; the
            # stateless era against this server is tests/interop/test_sdk_both_eras.py.
            era="handshake",
        ) as client:
            yield client, rec


@pytest.mark.anyio
async def test_mcpkit_client_initializes_with_sdk_server_at_2025_11_25() -> None:
    async with kit_client() as (client, _):
        assert client.protocol == "2025-11-25"
        assert client.server_info["name"] == "sdk-interop-server"
        assert client.server_info["version"] == "9.9.9"
        assert client.instructions == "An official-SDK server for mcpkit tests."
        caps = client.server_capabilities
        assert {"tools", "resources", "prompts", "completions", "logging"} <= set(caps)


@pytest.mark.anyio
async def test_mcpkit_client_lists_sdk_tools_and_calls_echo_and_structured_add() -> None:
    async with kit_client() as (client, _):
        tools = {t["name"]: t for t in await client.list_all_tools()}
        assert {"echo", "add", "ask_llm", "book", "chatty", "countdown", "roots", "explode"} <= set(tools)
        assert tools["add"]["outputSchema"]["properties"]["result"]["type"] == "integer"
        assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
        echo = await client.call_tool("echo", {"text": "from mcpkit"})
        assert echo["content"] == [{"type": "text", "text": "from mcpkit"}]
        assert echo.get("isError") is False
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert added["structuredContent"] == {"result": 3}
        assert added.get("isError") is False


@pytest.mark.anyio
async def test_mcpkit_sampling_handler_answers_sdk_create_message() -> None:
    async with kit_client() as (client, rec):
        result = await client.call_tool("ask_llm", {"question": "What is MCP?"})
        assert result["content"][0]["text"] == "model=mcpkit-model text=mcpkit says hi"
    assert len(rec.sampling_requests) == 1
    request = rec.sampling_requests[0]
    assert request["maxTokens"] == 50
    assert request["systemPrompt"] == "Be brief."
    assert request["messages"] == [{"role": "user", "content": {"type": "text", "text": "What is MCP?"}}]


@pytest.mark.anyio
async def test_mcpkit_elicitation_handler_accepting_answers_sdk_elicit() -> None:
    async with kit_client() as (client, rec):
        result = await client.call_tool("book", {"restaurant": "Kit Bistro"})
        assert result["content"][0]["text"] == "accepted guests=2 confirm=True"
    assert len(rec.elicitations) == 1
    params = rec.elicitations[0]
    assert params["message"] == "Book Kit Bistro?"
    assert params["requestedSchema"]["properties"]["guests"]["type"] == "integer"
    assert set(params["requestedSchema"]["required"]) == {"guests", "confirm"}


@pytest.mark.anyio
async def test_mcpkit_elicitation_handler_declining_reaches_sdk_as_decline() -> None:
    async with kit_client(KitRecorder(elicit_answer={"action": "decline"})) as (client, _):
        result = await client.call_tool("book", {"restaurant": "Kit Bistro"})
        assert result["content"][0]["text"] == "not booked: decline"


@pytest.mark.anyio
async def test_mcpkit_roots_answer_sdk_list_roots() -> None:
    async with kit_client() as (client, _):
        result = await client.call_tool("roots", {})
        assert result["structuredContent"] == {"result": ["file:///srv/one", "file:///srv/two"]}


@pytest.mark.anyio
async def test_mcpkit_on_log_receives_sdk_log_messages_and_set_level_reaches_the_sdk() -> None:
    async with kit_client() as (client, rec):
        await client.call_tool("chatty", {})
        await anyio.sleep(0.05)
        assert [(log["level"], log["data"], log.get("logger")) for log in rec.logs] == [
            ("debug", "debug line", "sdk"),
            ("info", "info line", "sdk"),
            ("error", "error line", "sdk"),
        ]
        rec.logs.clear()
        await client.set_logging_level("error")
        await client.call_tool("chatty", {})
        await anyio.sleep(0.05)
        assert [log["level"] for log in rec.logs] == ["error"]


@pytest.mark.anyio
async def test_mcpkit_on_progress_receives_sdk_progress_in_order() -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with kit_client() as (client, _):
        result = await client.call_tool(
            "countdown", {"steps": 4}, on_progress=lambda p, t, m: seen.append((p, t, m))
        )
        assert result["content"][0]["text"] == "done 4"
    assert seen == [(1, 4, "step 1"), (2, 4, "step 2"), (3, 4, "step 3"), (4, 4, "step 4")]


@pytest.mark.anyio
async def test_mcpkit_client_lists_and_reads_sdk_static_and_templated_resources() -> None:
    async with kit_client() as (client, _):
        resources = (await client.list_resources())["resources"]
        assert [(r["uri"], r["name"], r["mimeType"]) for r in resources] == [
            ("sdk://static", "static", "text/plain")
        ]
        templates = (await client.list_resource_templates())["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["sdk://users/{user_id}"]
        static = await client.read_resource("sdk://static")
        assert static["contents"] == [
            {"uri": "sdk://static", "mimeType": "text/plain", "text": "static contents"}
        ]
        user = await client.read_resource("sdk://users/42")
        assert user["contents"][0]["text"] == "user 42"
        assert user["contents"][0]["uri"] == "sdk://users/42"


@pytest.mark.anyio
async def test_mcpkit_client_gets_remote_error_for_unknown_sdk_resource() -> None:
    async with kit_client() as (client, _):
        with pytest.raises(RemoteError) as info:
            await client.read_resource("sdk://missing")
        # The SDK answers an unknown resource with -32602 (not the spec's suggested -32002).
        assert info.value.code == -32602
        assert "sdk://missing" in str(info.value)


@pytest.mark.anyio
async def test_mcpkit_client_lists_and_gets_sdk_prompt() -> None:
    async with kit_client() as (client, _):
        prompts = (await client.list_prompts())["prompts"]
        assert [(p["name"], p["arguments"]) for p in prompts] == [
            ("greet", [{"name": "name", "required": True}])
        ]
        result = await client.get_prompt("greet", {"name": "Ann"})
        assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello, Ann!"}}]


@pytest.mark.anyio
async def test_mcpkit_client_completes_sdk_prompt_argument() -> None:
    async with kit_client() as (client, _):
        completion = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "al")
        assert completion["values"] == ["alice", "albert"]
        none = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "zz")
        assert none["values"] == []


@pytest.mark.anyio
async def test_mcpkit_client_pings_sdk_server() -> None:
    async with kit_client() as (client, _):
        assert await client.ping() is None
        # The connection still works afterwards.
        assert (await client.call_tool("echo", {"text": "after ping"}))["content"][0]["text"] == "after ping"


@pytest.mark.anyio
async def test_sdk_server_reports_unknown_tool_and_raised_exception_as_is_error_results() -> None:
    async with kit_client() as (client, _):
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown["isError"] is True
        assert unknown["content"][0]["text"] == "Unknown tool: no_such_tool"
        exploded = await client.call_tool("explode", {})
        assert exploded["isError"] is True
        assert exploded["content"][0]["text"] == "Error executing tool explode"
        bad = await client.call_tool("add", {"a": 1, "b": "x"})
        assert bad["isError"] is True
        assert "b" in bad["content"][0]["text"] and "valid integer" in bad["content"][0]["text"]
