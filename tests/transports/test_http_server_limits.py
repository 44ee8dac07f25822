"""Streamable HTTP: the MCP-Protocol-Version check after initialize, and memory that stays bounded."""

from __future__ import annotations

import gc
import tracemalloc

import anyio
import httpx
import pytest
from test_http_server import call, init_body, make_server, open_session, rpc, serving

from mcpkit.protocol.sse import SSEDecoder
from mcpkit.transports.http_server import StreamableHTTPApp
from mcpkit.transports.http_server.event_store import InMemoryEventStore
from messages import HEADERS
from scale import scaled

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


async def test_with_strict_version_a_header_other_than_the_negotiated_one_is_400(hosting: str) -> None:
    async with serving(hosting, strict_version=True) as (client, url, app, _):
        headers = await open_session(client, url)
        assert app.sessions[headers["mcp-session-id"]].version == "2025-11-25"
        other = {**headers, "mcp-protocol-version": "2025-06-18"}
        response = await client.post(url, content=rpc(1, "ping"), headers=other)
        assert response.status_code == 400
        message = response.json()["error"]["message"]
        assert "'2025-06-18' does not match" in message and "'2025-11-25'" in message
        get = {**other, "accept": "text/event-stream"}
        assert (await client.get(url, headers=get)).status_code == 400
        assert (await client.delete(url, headers=other)).status_code == 400
        absent = {k: v for k, v in headers.items() if k != "mcp-protocol-version"}
        assert (await client.post(url, content=rpc(2, "ping"), headers=absent)).status_code == 200
        assert (await client.post(url, content=rpc(3, "ping"), headers=headers)).status_code == 200


async def test_an_unsupported_version_is_400_naming_the_supported_ones(hosting: str) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        bad = {**headers, "mcp-protocol-version": "2099-01-01"}
        response = await client.post(url, content=rpc(1, "ping"), headers=bad)
        assert response.status_code == 400
        assert "unsupported MCP-Protocol-Version '2099-01-01'" in response.json()["error"]["message"]
        assert "2025-11-25" in response.json()["error"]["message"]


async def test_by_default_another_supported_version_is_accepted_and_the_negotiated_one_governs(
    hosting: str,
) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)  # negotiated 2025-11-25, which primes SSE streams
        older = {**headers, "mcp-protocol-version": "2025-03-26"}
        response = await client.post(url, content=call(1, "add", {"a": 1, "b": 2}), headers=older)
        assert response.status_code == 200
        first = SSEDecoder().feed(response.content)[0]
        assert first.data == "" and first.retry == 1000


@pytest.mark.scale
async def test_thousands_of_abandoned_sessions_leave_sessions_and_stored_events_bounded() -> None:
    count = scaled(2000, least=800)  # tests/scale.py
    store = InMemoryEventStore(max_events=8)
    cap = 50
    app = StreamableHTTPApp(make_server(), max_sessions=cap, session_idle_timeout=0.2, event_store=store)
    transport = httpx.ASGITransport(app=app)
    peaks = {"sessions": 0, "stored sessions": 0, "events": 0}
    created = refused = 0
    tracemalloc.start()
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            with anyio.fail_after(120):
                for i in range(count):
                    if i == count // 4:
                        gc.collect()
                        early, _ = tracemalloc.get_traced_memory()
                    response = await client.post("/mcp", content=init_body(), headers=HEADERS)
                    if response.status_code == 503:
                        refused += 1
                        await anyio.sleep(0.01)  # let the reaper catch up, as a client honouring Retry-After
                        continue
                    assert response.status_code == 200
                    created += 1
                    if i % 10 == 0:  # some sessions do work first, storing more than the per-session cap
                        headers = {**HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
                        for rid in range(1, 6):
                            await client.post("/mcp", content=call(rid, "chatty"), headers=headers)
                    peaks["sessions"] = max(peaks["sessions"], len(app.sessions))
                    peaks["stored sessions"] = max(peaks["stored sessions"], store.session_count)
                    peaks["events"] = max(peaks["events"], store.event_count)
                while app.sessions or store.session_count:
                    await anyio.sleep(0.05)
        gc.collect()
        late, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await app.aclose()
    assert created > count // 4  # sessions really came and went, many times the cap
    assert peaks["sessions"] <= cap and peaks["stored sessions"] <= cap
    assert peaks["events"] <= cap * store.max_events
    assert store.event_count == 0 and store.byte_count == 0
    assert late < early and late < 1_000_000, (early, late)  # all of it given back once they are gone


async def test_a_repeated_session_id_or_version_header_is_400_not_the_last_copy_silently(
    hosting: str,
) -> None:
    async with serving(hosting) as (client, url, _, _):
        headers = await open_session(client, url)
        for name, other in (("mcp-session-id", "someone-else"), ("mcp-protocol-version", "2025-06-18")):
            twice = [*headers.items(), (name, other)]
            response = await client.post(url, content=rpc(1, "ping"), headers=twice)
            assert response.status_code == 400
            assert f"{name} header appears more than once" in response.json()["error"]["message"]
            get = [*{**headers, "accept": "text/event-stream"}.items(), (name, other)]
            assert (await client.get(url, headers=get)).status_code == 400
