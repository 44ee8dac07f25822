"""Operations on the Streamable HTTP app over real uvicorn (issue 30): the probes, a drain begun in the
process (readiness 503, no new sessions, GET streams end with `retry:`, calls in flight finish), and SSE
heartbeats on an idle GET stream, and metrics (Prometheus scraped at /metrics, OpenTelemetry),
and forwarded headers from trusted proxies only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

import peers
from mcpkit import Server
from mcpkit.runtime.metrics import OpenTelemetryMetrics, PrometheusMetrics
from mcpkit.server.measure import Measure
from mcpkit.testing import connect
from mcpkit.transports.http_server import Operations, StreamableHTTPApp
from mcpkit.transports.http_server.forwarded import TrustedProxies
from mcpkit.transports.http_server.probes import Probes
from messages import HEADERS

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"


def make_server(release: anyio.Event | None = None) -> Server:
    server = Server("ops-test")

    @server.tool()
    async def slow() -> str:
        if release is not None:
            await release.wait()
        return "finished"

    return server


def rpc(rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}).encode()


async def open_session(client: httpx.AsyncClient, url: str) -> dict[str, str]:
    params = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    reply = await client.post(url, content=rpc(1, "initialize", params), headers=HEADERS)
    assert reply.status_code == 200, reply.text
    session = {**HEADERS, "mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert (await client.post(url, content=note, headers=session)).status_code == 202
    return session


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[tuple[httpx.AsyncClient, str, str]]:
    async with peers.serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        yield client, url, url.removesuffix("/mcp")


async def test_probes_answer_next_to_the_endpoint_without_the_host_check() -> None:
    app = StreamableHTTPApp(make_server(), operations=Operations())
    async with served(app) as (client, _, base):
        health = await client.get(base + "/healthz", headers={"host": "10.1.2.3:8000"})
        ready = await client.get(base + "/readyz", headers={"origin": "https://elsewhere.example"})
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        assert (ready.status_code, ready.json()) == (200, {"status": "ok"})
        assert (await client.post(base + "/readyz")).status_code == 404
        assert (await client.get(base + "/elsewhere")).status_code == 404


async def test_probe_paths_are_configurable_and_absent_without_operations() -> None:
    plain = StreamableHTTPApp(make_server())
    async with served(plain) as (client, _, base):
        assert (await client.get(base + "/healthz")).status_code == 404
    moved = StreamableHTTPApp(make_server(), operations=Operations(health_path="/live", ready_path=None))
    async with served(moved) as (client, _, base):
        assert (await client.get(base + "/live")).status_code == 200
        assert (await client.get(base + "/readyz")).status_code == 404


async def test_a_failing_readiness_check_makes_readyz_503_with_its_reason() -> None:
    app = StreamableHTTPApp(make_server(), operations=Operations())
    assert app._probes is not None

    async def down() -> str | None:
        return "redis unavailable: ConnectionError"

    app._probes.checks = (down,)
    async with served(app) as (client, _, base):
        ready = await client.get(base + "/readyz")
        assert (ready.status_code, ready.json()) == (503, {"status": "redis unavailable: ConnectionError"})
        assert (await client.get(base + "/healthz")).status_code == 200


async def test_draining_refuses_new_sessions_ends_get_streams_with_retry_and_lets_calls_finish() -> None:
    release = anyio.Event()
    app = StreamableHTTPApp(
        make_server(release), operations=Operations(drain_on_sigterm=False, heartbeat=None), retry_ms=1500
    )
    async with served(app) as (client, url, base):
        session = await open_session(client, url)
        streamed: list[bytes] = []
        result: list[httpx.Response] = []

        async def listen() -> None:
            get = {**session, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=get) as stream:
                async for chunk in stream.aiter_bytes():
                    streamed.append(chunk)

        async def call() -> None:
            result.append(
                await client.post(url, content=rpc(2, "tools/call", {"name": "slow"}), headers=session)
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(listen)
            tg.start_soon(call)
            with anyio.fail_after(20):
                while not streamed:  # the GET stream opened (its priming event)
                    await anyio.sleep(0.02)
            app.drain()
            with anyio.fail_after(20):
                ready = await client.get(base + "/readyz")
                assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
                params = {
                    "protocolVersion": VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                }
                refused = await client.post(url, content=rpc(9, "initialize", params), headers=HEADERS)
                assert (refused.status_code, refused.headers["retry-after"]) == (503, "1")
                while not b"".join(streamed).endswith(b"retry: 1500\n\n"):
                    await anyio.sleep(0.02)
            assert not result  # the call still runs
            release.set()
        assert result[0].status_code == 200
        assert "finished" in result[0].text


async def test_an_idle_get_stream_carries_heartbeat_comments() -> None:
    app = StreamableHTTPApp(make_server(), operations=Operations(heartbeat=0.05, drain_on_sigterm=False))
    async with served(app) as (client, url, _):
        session = await open_session(client, url)
        seen = b""
        with anyio.fail_after(20):
            async with client.stream(
                "GET", url, headers={**session, "accept": "text/event-stream"}
            ) as stream:
                async for chunk in stream.aiter_bytes():
                    seen += chunk
                    if seen.count(b": keep-alive\n\n") >= 2:
                        break


def measured_server() -> Server:
    server = Server("measured")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


async def test_metrics_scraped_after_known_traffic_count_it_with_names_from_the_registry() -> None:
    server = measured_server()
    metrics = PrometheusMetrics()
    server.middleware.add(Measure(metrics, server.registry))
    app = StreamableHTTPApp(server, operations=Operations(metrics=metrics))
    async with served(app) as (client, url, base):
        session = await open_session(client, url)
        for rid, name in enumerate(["add", "add", "made-up-name-1", "made-up-name-2"], start=2):
            call = rpc(rid, "tools/call", {"name": name, "arguments": {"a": 1, "b": 2}})
            assert (await client.post(url, content=call, headers=session)).status_code == 200
        scraped = await client.get(base + "/metrics")
        assert scraped.headers["content-type"].startswith("text/plain")
        series = scraped.text.splitlines()
        browser = await client.get(base + "/metrics", headers={"sec-fetch-site": "same-origin"})
    count = "mcp_server_operation_duration_seconds_count"
    assert f'{count}{{error_type="",mcp_method_name="tools/call",mcp_name="add"}} 2.0' in series
    assert f'{count}{{error_type="-32602",mcp_method_name="tools/call",mcp_name="other"}} 2.0' in series
    assert "mcp_server_sessions 1.0" in series
    assert "mcp_server_requests_in_flight 0.0" in series
    assert "made-up-name" not in scraped.text
    assert browser.status_code == 403


async def test_without_metrics_there_is_no_metrics_endpoint() -> None:
    async with served(StreamableHTTPApp(make_server(), operations=Operations())) as (client, _, base):
        assert (await client.get(base + "/metrics")).status_code == 404


async def test_measure_reports_through_the_opentelemetry_metrics_api() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    server = measured_server()
    server.middleware.add(
        Measure(OpenTelemetryMetrics(MeterProvider(metric_readers=[reader])), server.registry)
    )
    async with connect(server, era="handshake") as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    data = reader.get_metrics_data()
    assert data is not None
    metrics = {m.name: m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    point: Any = next(iter(metrics["mcp.server.operation.duration"].data.data_points))
    assert dict(point.attributes or {}) == {"mcp.method.name": "tools/call", "gen_ai.tool.name": "add"}
    assert point.count == 1
    assert "mcp.server.requests.in_flight" in metrics


@pytest.mark.parametrize(("trusted", "status"), [(["127.0.0.1"], 200), (["10.0.0.0/8"], 421)])
async def test_forwarded_host_is_honoured_only_from_a_trusted_proxy(trusted: list[str], status: int) -> None:
    app = StreamableHTTPApp(make_server(), allowed_hosts=["mcp.example.com"])
    async with served(TrustedProxies(app, trusted)) as (client, url, _):
        params = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        headers = {**HEADERS, "x-forwarded-host": "mcp.example.com", "x-forwarded-proto": "https"}
        reply = await client.post(url, content=rpc(1, "initialize", params), headers=headers)
        assert reply.status_code == status


def test_the_client_is_the_nearest_untrusted_forwarded_address() -> None:
    proxies = TrustedProxies(None, ["10.0.0.0/8"])
    headers = [(b"x-forwarded-for", b"203.0.113.9, 198.51.100.1, 10.0.0.7"), (b"host", b"internal")]
    scope = proxies._rewritten({"type": "http", "client": ("10.0.0.2", 1), "headers": headers})
    assert scope["client"] == ("198.51.100.1", 0)
    assert not proxies.trusts("203.0.113.9") and proxies.trusts("10.1.2.3")


async def test_past_the_drain_deadline_a_call_still_running_is_answered_with_an_error() -> None:
    never = anyio.Event()
    operations = Operations(drain_on_sigterm=False, drain_timeout=0.2, heartbeat=None)
    app = StreamableHTTPApp(make_server(never), operations=operations, json_response=True)
    async with served(app) as (client, url, _):
        session = await open_session(client, url)
        answered: list[httpx.Response] = []

        async def call() -> None:
            answered.append(
                await client.post(url, content=rpc(2, "tools/call", {"name": "slow"}), headers=session)
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            assert app._drain is not None
            with anyio.fail_after(30):
                while app._drain.in_flight == 0:  # the call is in (the session's own requests are done)
                    await anyio.sleep(0.02)
            app.drain()
            with anyio.fail_after(30):
                while not answered:
                    await anyio.sleep(0.02)
        assert answered[0].status_code == 404
        assert answered[0].json()["error"]["message"] == "Session not found: it ended before the response"


async def test_readiness_waits_for_the_lifespan_to_start() -> None:
    probes = Probes(Operations())
    assert (
        await probes.unready() is None
    )  # no lifespan (a mount that does not forward it): nothing to wait for
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    watched = probes.watch_lifespan(send)
    assert await probes.unready() == "starting"
    await watched({"type": "lifespan.startup.complete"})
    assert await probes.unready() is None and sent == [{"type": "lifespan.startup.complete"}]
    probes.draining = True
    assert await probes.unready() == "draining"


async def test_a_slow_calls_sse_response_carries_heartbeat_comments_until_its_result() -> None:
    release = anyio.Event()
    app = StreamableHTTPApp(
        make_server(release), operations=Operations(heartbeat=0.05, drain_on_sigterm=False)
    )
    async with served(app) as (client, url, _):
        session = await open_session(client, url)
        seen = b""
        call = rpc(2, "tools/call", {"name": "slow"})
        with anyio.fail_after(30):
            async with client.stream("POST", url, content=call, headers=session) as stream:
                async for chunk in stream.aiter_bytes():
                    seen += chunk
                    if seen.count(b": keep-alive\n\n") == 2:
                        release.set()
        assert seen.count(b": keep-alive\n\n") >= 2
        assert b'"finished"' in seen.rsplit(b": keep-alive\n\n", 1)[1]  # the result came after them
