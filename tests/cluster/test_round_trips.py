"""The Redis round trips one request costs a worker (issue 29's targets), counted by the backplane's own
round-trip metric against a real redis-server: a 2025-11-25 request, its SSE priming event included, 2; an
initialize 2 on one Redis; a 2026-07-28 request none. The fewest over several requests is what the
request itself costs (a worker's once-a-second upkeep may add to one of them)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import peers
from cluster.parts import redis_server
from mcpkit import Server
from mcpkit.cluster import RedisBackplane
from mcpkit.runtime.metrics import PrometheusMetrics
from mcpkit.transports.http_server import Operations, StreamableHTTPApp
from messages import HEADERS, initialize

pytestmark = pytest.mark.anyio
SAMPLES = 6


class Counted:
    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url

    async def round_trips(self) -> float:
        scraped = await self.http.get(self.url.removesuffix("/mcp") + "/metrics")
        for line in scraped.text.splitlines():
            if line.startswith("mcp_server_backplane_round_trips_total "):
                return float(line.split()[1])
        return 0.0

    async def fewest(self, request: Callable[[int], Awaitable[None]]) -> float:
        """The fewest round trips one of SAMPLES such requests cost."""
        costs = []
        for i in range(SAMPLES):
            before = await self.round_trips()
            await request(i)
            costs.append(await self.round_trips() - before)
        return min(costs)


@asynccontextmanager
async def counted(tmp_path: Path) -> AsyncIterator[Counted]:
    with redis_server(tmp_path) as redis:
        backplane = RedisBackplane(redis.url, heartbeat=60, dead_after=120)
        server = Server("trips", peers=backplane.peers(), tasks=backplane.tasks())

        @server.tool()
        def add(a: int, b: int) -> int:
            return a + b

        operations = Operations(metrics=PrometheusMetrics(), heartbeat=None)
        app = StreamableHTTPApp(server, backplane=backplane, operations=operations)
        async with peers.serving(app) as url, httpx.AsyncClient(timeout=30) as http:
            yield Counted(http, url)


def tools_call(rid: int) -> dict[str, Any]:
    params = {"name": "add", "arguments": {"a": rid, "b": 1}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_a_handshake_era_request_costs_two_round_trips_its_priming_event_included(
    tmp_path: Path, version: str
) -> None:
    async with counted(tmp_path) as redis:
        opened = await redis.http.post(redis.url, json=initialize(version), headers=HEADERS)
        headers = {
            **HEADERS,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": version,
        }

        async def call(i: int) -> None:
            answered = await redis.http.post(redis.url, json=tools_call(i + 2), headers=headers)
            assert answered.status_code == 200 and f'"result":{i + 3}' in answered.text
            assert ("retry:" in answered.text) == (version == "2025-11-25")  # the priming event

        assert await redis.fewest(call) == 2


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_an_initialize_costs_two_round_trips_on_one_redis(tmp_path: Path, version: str) -> None:
    async with counted(tmp_path) as redis:

        async def opened(i: int) -> None:
            answered = await redis.http.post(redis.url, json=initialize(version), headers=HEADERS)
            assert answered.status_code == 200 and "mcp-session-id" in answered.headers

        assert await redis.fewest(opened) <= 2


async def test_a_stateless_request_costs_no_round_trip(tmp_path: Path) -> None:
    version = "2026-07-28"
    async with counted(tmp_path) as redis:
        headers = {**HEADERS, "mcp-protocol-version": version, "mcp-method": "tools/call", "mcp-name": "add"}

        async def call(i: int) -> None:
            request = tools_call(i + 1)
            meta = "io.modelcontextprotocol/"
            request["params"]["_meta"] = {meta + "protocolVersion": version, meta + "clientCapabilities": {}}
            answered = await redis.http.post(redis.url, json=request, headers=headers)
            assert answered.status_code == 200 and f'"result":{i + 2}' in answered.text, answered.text

        assert await redis.fewest(call) == 0
