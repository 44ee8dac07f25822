"""A malformed answer POSTed to the server's own request fails that request at once (never a 300 s wait)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from test_http_server import hosted, open_session, rpc

from mcpkit import Context, Server
from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def sampling_server() -> Server:
    server = Server("sampler", client_request_timeout=300)

    @server.tool()
    async def summarize(ctx: Context) -> str:
        try:
            await ctx.sample("summarize this", max_tokens=10)
        except Exception as exc:
            return f"failed: {exc}"
        return "sampled"

    return server


@pytest.mark.parametrize("answer", [{"result": "not an object"}, {"error": {"code": "x", "message": 1}}])
async def test_a_malformed_answer_to_sampling_over_http_fails_the_tool_at_once(
    answer: dict[str, Any], hosting: str
) -> None:
    app = StreamableHTTPApp(sampling_server())
    async with hosted(hosting, app, timeout=10) as (http, url):
        headers = await open_session(http, url, capabilities={"sampling": {}})
        call = rpc(1, "tools/call", {"name": "summarize", "arguments": {}})
        with anyio.fail_after(10):  # before the fix: the tool waited out client_request_timeout (300 s)
            async with http.stream("POST", url, content=call, headers=headers) as stream:
                decoder, replies = SSEDecoder(), []
                async for chunk in stream.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if not event.data:
                            continue
                        message = json.loads(event.data)
                        if message.get("method") == "sampling/createMessage":
                            bad = json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}).encode()
                            refused = await http.post(url, content=bad, headers=headers)
                            assert refused.status_code == 400
                        elif message.get("id") == 1:
                            replies.append(message)
        [reply] = replies
        text = reply["result"]["content"][0]["text"]
        assert text.startswith("failed:") and "malformed response" in text, text
