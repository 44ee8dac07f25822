"""A response whose whole body is known when it starts declares its length (no chunked framing): a JSON
answer, and an SSE stream whose handler answered before the stream started (real servers, in process)."""

from __future__ import annotations

import pytest
from test_http_server import call, events, hosted, open_session

from mcpkit import Server
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def quick_server() -> Server:
    server = Server("lengths")

    @server.tool()
    async def add(a: int, b: int) -> str:  # never suspends
        return str(a + b)

    return server


@pytest.mark.parametrize("json_response", [True, False])
async def test_an_answer_known_whole_carries_its_content_length(
    hosting: str, json_response: bool, anyio_backend_name: str
) -> None:
    app = StreamableHTTPApp(quick_server(), json_response=json_response)
    async with hosted(hosting, app) as (client, url):
        headers = await open_session(client, url)
        response = await client.post(url, content=call(1, "add", {"a": 1, "b": 2}), headers=headers)
    assert response.status_code == 200
    if not json_response:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert events(response.content)[-1]["id"] == 1
        if anyio_backend_name != "asyncio":
            return  # trio runs the handler some turns later: the stream has started by then
    assert "transfer-encoding" not in response.headers
    assert int(response.headers["content-length"]) == len(response.content)
