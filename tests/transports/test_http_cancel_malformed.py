"""notifications/cancelled naming no valid request id over HTTP: ignored, never a 500 (real uvicorn)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_http_server import hosted, make_server, open_session
from test_http_stateless import meta

from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]

BAD_IDS: list[Any] = [{}, [], None, True, 1.5]


def cancelled(rid: Any, **params: Any) -> bytes:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid, **params}}
    return json.dumps(body).encode()


def add(rid: int) -> bytes:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode()


@pytest.mark.parametrize("rid", BAD_IDS)
async def test_a_cancel_naming_no_valid_id_in_a_session_is_accepted_and_ignored(
    rid: Any, hosting: str
) -> None:
    async with hosted(hosting, StreamableHTTPApp(make_server()), timeout=10) as (http, url):
        headers = await open_session(http, url)
        refused = await http.post(url, content=cancelled(rid), headers=headers)
        ok = await http.post(url, content=add(5), headers=headers)
    assert refused.status_code == 202
    assert ok.status_code == 200 and "3" in ok.text


@pytest.mark.parametrize("rid", BAD_IDS)
async def test_a_stateless_cancel_naming_no_valid_id_is_never_a_500(rid: Any, hosting: str) -> None:
    headers = {**HEADERS, "mcp-protocol-version": "2026-07-28", "mcp-method": "notifications/cancelled"}
    async with hosted(hosting, StreamableHTTPApp(make_server()), timeout=10) as (http, url):
        refused = await http.post(url, content=cancelled(rid, _meta=meta()), headers=headers)
    assert refused.status_code < 500
