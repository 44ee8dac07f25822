"""OpenTelemetry: a CLIENT span per request sent and a SERVER span per request handled, one trace across
both (the context rides in `params._meta`), in both eras, in memory and over Streamable HTTP, with the
semantic conventions' names and attributes and the failures recorded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import peers
from conftest import requirement
from mcpkit import Client, Context, Server, ToolError
from mcpkit.client import connect_http
from mcpkit.protocol.errors import RemoteError
from mcpkit.testing import connect
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]
Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def spans() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def build(provider: TracerProvider) -> Server:
    server = Server("traced", tracing=provider)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def broken() -> str:
        raise ToolError("no luck")

    @server.prompt()
    def greet(name: str) -> str:
        return f"hello {name}"

    @server.resource("notes://today")
    def today() -> str:
        return "nothing"

    @server.tool()
    def lookup(sku: str) -> str:  # a sync tool: on a worker thread, its spans still children of the request's
        with provider.get_tracer("app").start_as_current_span("database query"):
            return sku.lower()

    @server.tool()
    async def meta_of(ctx: Context) -> JSON:
        return {key: ctx.meta[key] for key in ("traceparent", "mine") if key in ctx.meta}

    return server


@asynccontextmanager
async def over_http(server: Server, **options: Any) -> AsyncIterator[Client]:
    async with peers.serving(StreamableHTTPApp(server)) as url, connect_http(url, **options) as client:
        yield client


TRANSPORTS = [connect, over_http]


def named(exporter: InMemorySpanExporter, name: str, kind: SpanKind) -> ReadableSpan:
    found = [s for s in exporter.get_finished_spans() if s.name == name and s.kind is kind]
    assert len(found) == 1, [(s.name, s.kind) for s in exporter.get_finished_spans()]
    return found[0]


@pytest.mark.parametrize("transport", TRANSPORTS, ids=["memory", "http"])
@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_one_trace_runs_from_the_clients_span_to_the_servers(
    spans: tuple[TracerProvider, InMemorySpanExporter], era: JSON, transport: Connect
) -> None:
    provider, exporter = spans
    async with transport(build(provider), tracing=provider, **era) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
        await client.get_prompt("greet", {"name": "ada"})
        await client.read_resource("notes://today")
    sent = named(exporter, "tools/call add", SpanKind.CLIENT)
    handled = named(exporter, "tools/call add", SpanKind.SERVER)
    assert sent.context is not None and handled.context is not None and handled.parent is not None
    assert handled.context.trace_id == sent.context.trace_id
    assert handled.parent.span_id == sent.context.span_id and handled.parent.is_remote
    version = "2025-11-25" if "protocol_version" in era else "2026-07-28"
    for span in (sent, handled):
        assert span.attributes is not None
        assert span.attributes["mcp.method.name"] == "tools/call"
        assert span.attributes["gen_ai.tool.name"] == "add"
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["mcp.protocol.version"] == version
        assert span.status.status_code is StatusCode.UNSET
    assert sent.attributes is not None and handled.attributes is not None
    assert sent.attributes["jsonrpc.request.id"] == handled.attributes["jsonrpc.request.id"]
    prompt = named(exporter, "prompts/get greet", SpanKind.SERVER)
    assert prompt.attributes is not None and prompt.attributes["gen_ai.prompt.name"] == "greet"
    read = named(exporter, "resources/read", SpanKind.SERVER)  # the URI: an attribute, not in the name
    assert read.attributes is not None and read.attributes["mcp.resource.uri"] == "notes://today"
    if transport is over_http:
        assert handled.attributes["network.transport"] == "tcp"
        if "protocol_version" in era:  # the handshake era's HTTP session
            assert isinstance(handled.attributes["mcp.session.id"], str)


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_the_servers_span_is_a_child_of_the_span_the_caller_is_in(
    spans: tuple[TracerProvider, InMemorySpanExporter], era: JSON
) -> None:
    provider, exporter = spans
    tracer = provider.get_tracer("app")
    async with connect(build(provider), tracing=provider, **era) as client:
        with tracer.start_as_current_span("agent step") as outer:
            await client.call_tool("add", {"a": 1, "b": 1})
    sent = named(exporter, "tools/call add", SpanKind.CLIENT)
    handled = named(exporter, "tools/call add", SpanKind.SERVER)
    trace_id = outer.get_span_context().trace_id
    assert sent.parent is not None and sent.parent.span_id == outer.get_span_context().span_id
    assert sent.context is not None and handled.context is not None
    assert sent.context.trace_id == handled.context.trace_id == trace_id


@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_spans_a_handler_makes_are_children_of_the_servers(
    spans: tuple[TracerProvider, InMemorySpanExporter], era: JSON
) -> None:
    provider, exporter = spans
    async with connect(build(provider), tracing=provider, **era) as client:
        await client.call_tool("lookup", {"sku": "A1"})
    handled = named(exporter, "tools/call lookup", SpanKind.SERVER)
    query = named(exporter, "database query", SpanKind.INTERNAL)
    assert handled.context is not None and query.parent is not None
    assert query.parent.span_id == handled.context.span_id


@pytest.mark.parametrize("transport", TRANSPORTS, ids=["memory", "http"])
@pytest.mark.parametrize("era", ERAS, ids=["handshake", "stateless"])
async def test_failures_are_recorded_on_both_spans(
    spans: tuple[TracerProvider, InMemorySpanExporter], era: JSON, transport: Connect
) -> None:
    provider, exporter = spans
    async with transport(build(provider), tracing=provider, **era) as client:
        tool_error = await client.call_tool("broken")
        with pytest.raises(RemoteError):
            await client.call_tool("missing")
    assert tool_error["isError"] is True
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = named(exporter, "tools/call broken", kind)
        assert span.attributes is not None and span.attributes["error.type"] == "tool_error"
        assert span.status.status_code is StatusCode.ERROR
        refused = named(exporter, "tools/call missing", kind)
        assert refused.attributes is not None
        code = refused.attributes["error.type"]
        assert code == refused.attributes["rpc.response.status_code"] and int(str(code)) < 0
        assert refused.status.status_code is StatusCode.ERROR and refused.status.description


@requirement("modern-meta-trace-context")
async def test_the_context_is_carried_in_meta_beside_the_callers_own_keys(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = spans
    async with connect(build(provider), tracing=provider) as client:
        result = await client.request(
            "tools/call", {"name": "meta_of", "arguments": {}, "_meta": {"mine": "kept"}}
        )
    sent = named(exporter, "tools/call meta_of", SpanKind.CLIENT)
    assert sent.context is not None
    seen = result["structuredContent"]
    assert seen["mine"] == "kept"
    version, trace_id, parent_id, flags = seen["traceparent"].split("-")  # W3C Trace Context
    assert (version, trace_id, parent_id) == (
        "00",
        f"{sent.context.trace_id:032x}",
        f"{sent.context.span_id:016x}",
    )
    assert int(flags, 16) & 1  # sampled


@pytest.mark.parametrize("bad", [123, ["00-x"], "00-zz-zz-01", {"a": 1}])
async def test_a_malformed_traceparent_starts_a_new_trace_and_breaks_nothing(
    spans: tuple[TracerProvider, InMemorySpanExporter], bad: Any
) -> None:
    provider, exporter = spans
    async with connect(build(provider)) as client:  # an untraced client: the _meta is the caller's
        params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"traceparent": bad}}
        result = await client.request("tools/call", params)
    assert result["structuredContent"] == {"result": 3}
    handled = named(exporter, "tools/call add", SpanKind.SERVER)
    assert handled.parent is None  # a root: nothing was taken from the bad value


async def test_a_notification_the_server_handles_gets_a_span(
    spans: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = spans
    server = build(provider)
    changed = anyio.Event()
    server.on_roots_changed(lambda session: changed.set())
    async with connect(server, protocol_version="2025-11-25", roots=[]) as client:
        await client.roots_changed()
        with anyio.fail_after(5):
            await changed.wait()
    span = named(exporter, "notifications/roots/list_changed", SpanKind.SERVER)
    assert span.attributes is not None and "jsonrpc.request.id" not in span.attributes


def test_without_tracing_opentelemetry_is_never_imported() -> None:
    code = (
        "import sys, anyio; from mcpkit import Server, Client; from mcpkit.testing import connect\n"
        "server = Server('s')\n"
        "server.tool()(lambda a: a)\n"
        "async def main():\n"
        "    async with connect(server) as c: await c.call_tool('<lambda>', {'a': 1})\n"
        "anyio.run(main)\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'loaded'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
