"""What a client sees when `wait_replicas` cannot be met: a real redis-server with no replica behind
workers asking for one, so every WAIT times out. Nothing the store could lose is acknowledged: the
initialize is refused with 503 and a JSON-RPC error (no Mcp-Session-Id handed out), in SSE and in JSON
response mode."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import peers
from cluster.parts import redis_server
from mcpkit import Server
from mcpkit.cluster import RedisBackplane
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS, INITIALIZE, body

pytestmark = pytest.mark.anyio


def tasking_server(plane: RedisBackplane) -> Server:
    server = Server("durable", peers=plane.peers(), tasks=plane.tasks())

    @server.tool(task=True)
    def echo(text: str) -> str:
        return text

    return server


@asynccontextmanager
async def unconfirmed_worker(tmp_path: Path, **app: Any) -> AsyncIterator[tuple[str, RedisBackplane]]:
    """A worker whose backplane asks one replica to confirm, on a Redis that has none."""
    with redis_server(tmp_path) as redis:
        plane = RedisBackplane(redis.url, wait_replicas=1, wait_timeout=0.2)
        served = StreamableHTTPApp(tasking_server(plane), backplane=plane, **app)
        async with peers.serving(served) as url:
            yield url, plane


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_an_initialize_no_replica_confirmed_is_refused_with_503_and_no_session_id(
    tmp_path: Path, json_response: bool
) -> None:
    async with (
        unconfirmed_worker(tmp_path, json_response=json_response) as (url, plane),
        httpx.AsyncClient(timeout=20) as http,
    ):
        refused = await http.post(url, content=body(INITIALIZE), headers=HEADERS)
        assert refused.status_code == 503, refused.text
        assert "mcp-session-id" not in refused.headers
        assert refused.headers["content-type"] == "application/json"
        error = refused.json()["error"]
        assert error["code"] == -32603 and "replica" in error["message"]
        assert error["data"] == {"reason": "not_durable"}
        assert refused.headers["retry-after"]
        state = plane.state()
        assert await state.redis.zcard(state.shared("sessions")) == 0  # its reserved record is gone
