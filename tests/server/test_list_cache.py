"""The list-result cache stays bounded whatever cursors clients send; bad cursors are -32602."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcpkit import RemoteError, Server
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def many_tools(count: int, **options: Any) -> Server:
    server = Server("many", **options)
    for index in range(count):
        server.add_tool(lambda: "ok", name=f"tool{index}")
    return server


def cursor_for(offset: int) -> str:
    """The cursor this server issues for `offset` (its format is the server's own business)."""
    return base64.urlsafe_b64encode(f"mcpkit:{offset}".encode()).decode()


async def test_respelled_cursors_for_page_zero_are_refused_and_not_cached() -> None:
    server = many_tools(3, page_size=2)
    plain = cursor_for(0)
    async with connect(server, era="handshake") as client:
        first = await client.list_tools(plain)
        for junk in range(1, 300):
            with pytest.raises(RemoteError) as info:
                await client.list_tools("!" * junk + plain)  # base64 decoding skips the "!"s
            assert info.value.code == -32602
    assert [t["name"] for t in first["tools"]] == ["tool0", "tool1"]
    assert server.registry.cached_pages == 1


async def test_every_offset_cursor_without_page_size_keeps_one_cache_entry() -> None:
    server = many_tools(300)
    async with connect(server, era="handshake") as client:
        for offset in range(301):
            result = await client.list_tools(cursor_for(offset) if offset else None)
            assert len(result["tools"]) == 300 - offset
    assert server.registry.cached_pages == 1


async def test_cache_holds_one_entry_per_page_of_a_paginated_list() -> None:
    server = many_tools(10, page_size=3)
    async with connect(server, era="handshake") as client:
        for _ in range(20):
            assert len(await client.list_all_tools()) == 10
        for offset in range(11):
            await client.list_tools(cursor_for(offset) if offset else None)
    assert server.registry.cached_pages == 4


LISTS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]


@pytest.mark.parametrize("cursor", [{}, [], 7, True, "x" * 10_000, cursor_for(10**30)])
@pytest.mark.parametrize("method", LISTS)
async def test_a_cursor_that_is_not_one_the_server_issued_is_invalid_params(cursor: Any, method: str) -> None:
    server = many_tools(3, page_size=2)
    server.add_resource("test://a", content="a")
    server.add_resource("test://{id}", lambda id: id)
    server.add_prompt(lambda: "p", name="p")
    async with connect(server, era="handshake") as client:
        with pytest.raises(RemoteError) as info:
            await client.request(method, {"cursor": cursor})
        assert info.value.code == -32602
        assert (await client.list_tools())["tools"]  # and the server keeps serving
