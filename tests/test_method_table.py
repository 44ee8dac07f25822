"""Every table about methods is read off the one table (protocol/methods.py): a row's item, its
asking the client, its cacheability and its span target show up in the headers, the scopes, the
spans, the request log, the input-required check and the caches, and nowhere else."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit.protocol.errors import HEADER_MISMATCH, LocalError, MCPError
from mcpkit.protocol.http_modern import check_request_headers
from mcpkit.protocol.http_request_headers import request_headers
from mcpkit.protocol.methods import ASKS_CLIENT, CACHEABLE, METHODS, MethodSpec, Role
from mcpkit.protocol.modern import PROTOCOL_VERSION, finish_result
from mcpkit.proxy.forward import FORWARDED
from mcpkit.runtime.tracing import span_of
from mcpkit.server import Server
from mcpkit.server.middlewares import RequestLog
from mcpkit.testing import connect

VERSION = "2026-07-28"
REQUESTS = {method: spec for method, spec in METHODS.items() if not spec.notification}


def _params(spec: MethodSpec, value: str) -> dict[str, Any]:
    return {spec.item: value} if spec.item is not None else {}


@pytest.mark.parametrize("method", sorted(REQUESTS))
def test_a_modern_request_mirrors_the_item_its_row_names_in_mcp_name_and_no_other(method: str) -> None:
    spec = METHODS[method]
    params = {**_params(spec, "café item"), "_meta": {PROTOCOL_VERSION: VERSION}}
    headers = request_headers({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, {})
    named = spec.item is not None and spec.modern
    assert ("Mcp-Name" in headers) is named
    lower = {name.lower(): value for name, value in headers.items()}
    check_request_headers(lower, method, params, [])  # the server reads the same row back
    if named:
        with pytest.raises(MCPError) as refused:
            check_request_headers({**lower, "mcp-name": "other"}, method, params, [])
        assert refused.value.code == HEADER_MISMATCH


def _guarded_server() -> Server:
    server = Server("guarded")
    server.add_tool(lambda: "x", name="item", scopes=["tool:use"])
    server.add_prompt(lambda: "x", name="item", scopes=["prompt:use"])
    server.add_resource("item", lambda: "x", scopes=["resource:read"])
    return server


@pytest.mark.parametrize("method", sorted(REQUESTS))
def test_a_request_needs_the_scopes_of_the_item_its_row_names(method: str) -> None:
    spec = METHODS[method]
    needed = _guarded_server().scopes_for(method, _params(spec, "item"))
    expected: dict[tuple[str, ...], set[str]] = {
        ("tools",): {"tool:use"},
        ("prompts",): {"prompt:use"},
        ("resources",): {"resource:read"},
    }
    guarded = spec.item is not None and method != "resources/unsubscribe"  # unsubscribing gives nothing
    assert needed == (expected.get(spec.capability[:1], set()) if guarded else set())


@pytest.mark.parametrize("method", sorted(REQUESTS))
def test_a_span_carries_the_item_under_its_rows_target_and_names_itself_after_a_name(method: str) -> None:
    spec = METHODS[method]
    name, attributes = span_of(method, {**_params(spec, "item"), "cursor": "c"})
    targets = {key: value for key, value in attributes.items() if key.startswith(("gen_ai.", "mcp.resource"))}
    targets.pop("gen_ai.operation.name", None)
    assert targets == ({spec.span_target: "item"} if spec.span_target is not None else {})
    assert name == (f"{method} item" if spec.span_target is not None and spec.item == "name" else method)


@pytest.mark.parametrize("method", sorted(REQUESTS))
def test_only_a_row_that_asks_the_client_may_answer_input_required(method: str) -> None:
    result = {"resultType": "input_required", "inputRequests": {}}
    if METHODS[method].asks_client:
        assert finish_result(method, result, None)["resultType"] == "input_required"
    else:
        with pytest.raises(LocalError):
            finish_result(method, result, None)
    assert {"tools/call", "prompts/get", "resources/read"} == ASKS_CLIENT


def test_the_caches_keep_the_rows_marked_cacheable_and_the_proxy_those_it_forwards() -> None:
    from mcpkit.proxy import forward

    lists = {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
    assert {*lists, "resources/read", "server/discover"} == CACHEABLE
    assert CACHEABLE - {"server/discover"} == forward._CACHEABLE  # the proxy answers discover itself
    assert forward._CACHEABLE <= FORWARDED


def test_a_row_takes_keywords_only_and_a_span_target_needs_an_item() -> None:
    with pytest.raises(TypeError):
        MethodSpec(Role.CLIENT)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        MethodSpec(sender=Role.CLIENT, span_target="gen_ai.tool.name")
    with pytest.raises(ValueError):
        MethodSpec(sender=Role.SERVER, notification=True, cacheable=True)


@pytest.mark.anyio
async def test_the_request_log_names_the_item_of_the_row(caplog: pytest.LogCaptureFixture) -> None:
    server = _guarded_server()
    server.middleware.add(RequestLog())
    with caplog.at_level(logging.INFO, logger="mcpkit.requests"):
        async with connect(server) as client:
            await client.call_tool("item")
            await client.read_resource("item")
            await client.list_tools()
    names = [(r.mcp_method, r.mcp_name) for r in caplog.records if hasattr(r, "mcp_method")]  # type: ignore[attr-defined]
    assert ("tools/call", "item") in names and ("resources/read", "item") in names
    assert ("tools/list", None) in names
