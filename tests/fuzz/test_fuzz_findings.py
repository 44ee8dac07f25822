"""The smallest inputs the fuzz tests found that break a rule, each as a plain test.

Each failed before its fix (a list cursor of the wrong type and a template value of the wrong type
were internal errors; a cancel naming an object id was a 500 over HTTP).
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson
import pytest
from fuzz_messages import SENTINEL, initialize, stateless_request
from fuzz_server import server
from test_fuzz_server import exchange

import peers
from mcpkit.transports.http_server import StreamableHTTPApp


def answer(message: dict[str, Any]) -> dict[str, Any]:
    [reply] = anyio.run(exchange, [orjson.dumps(message)], False)
    assert isinstance(reply, dict)
    return reply


@pytest.mark.parametrize("method", ["tools/list", "resources/list", "prompts/list"])
@pytest.mark.parametrize("cursor", [[], {}, [[]]])
def test_a_list_request_whose_cursor_is_an_array_or_object_is_invalid_params(
    method: str, cursor: Any
) -> None:
    reply = answer(stateless_request(1, method, {"cursor": cursor}))
    assert reply["error"]["code"] == -32602, reply


def test_a_templated_uri_whose_value_has_the_wrong_type_is_invalid_params() -> None:
    reply = answer(stateless_request(1, "resources/read", {"uri": "file:///project/notes/abc"}))
    assert reply["error"]["code"] == -32602, reply


@pytest.mark.anyio
@pytest.mark.parametrize("rid", [{}, [], {"id": 1}])
async def test_a_cancel_naming_an_object_request_id_over_http_is_no_server_error(rid: Any) -> None:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = initialize(SENTINEL)
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}
    async with peers.serving(StreamableHTTPApp(server)) as url, httpx.AsyncClient(timeout=10) as http:
        opened = await http.post(url, content=orjson.dumps(init), headers=headers)
        headers |= {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        response = await http.post(url, content=orjson.dumps(note), headers=headers)
    assert response.status_code in (202, 400), response.text
