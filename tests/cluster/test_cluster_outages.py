"""Redis failing under a cluster worker: every request settles on the store-failed path (a 503 before its
response started, a stored error event after), no handler task dies with an unretrieved exception, and
each outage is logged once when it starts and once when it ends.

Failures are made with Redis ACLs on a live server (`ACL SETUSER default -rpush`): the event log's appends
fail while the session's record can still be read, which is exactly a failure between a request's begin
and its first stored event, without sleeps tuned to this machine."""

from __future__ import annotations

import gc
import json
import logging
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import cluster
from cluster.raw_http import open_session
from mcpkit.protocol.sse import SSEDecoder
from messages import HEADERS

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


def call(rid: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": {"progressToken": "t"}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def store_outages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage().split(":")[0]
        for r in caplog.records
        if r.name == "mcpkit.cluster" and "session store (Redis)" in r.getMessage()
    ]


async def test_a_store_failure_before_the_first_event_is_a_503_and_each_outage_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with cluster(tmp_path, n=1) as workers, httpx.AsyncClient(timeout=10) as http:
        url = workers.urls[0]
        headers = await open_session(http, url, VERSION)
        for outage in range(2):
            workers.redis.command("ACL", "SETUSER", "default", "-rpush")
            for rid in (10, 11):
                refused = await http.post(
                    url, json=call(rid + outage * 10, "add", {"a": 1, "b": 2}), headers=headers
                )
                assert refused.status_code == 503, refused.text
                assert refused.headers["retry-after"] == "1"
                assert refused.json()["error"]["message"].startswith("Service Unavailable")
            workers.redis.command("ACL", "SETUSER", "default", "+rpush")
            served = await http.post(url, json=call(30 + outage, "add", {"a": 1, "b": 2}), headers=headers)
            assert served.status_code == 200 and b'"result":3' in served.content
        assert (
            store_outages(caplog)
            == [
                "the session store (Redis) is unreachable",
                "the session store (Redis) is reachable again",
            ]
            * 2
        )


async def test_a_store_failure_mid_stream_ends_it_quietly_and_the_resumption_gets_the_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with cluster(tmp_path, n=2) as workers, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, workers.urls[0], VERSION)
        last_id, progress = "", 0
        with anyio.fail_after(20):  # the POST's stream ends instead of hanging
            body = call(4, "slow", {"n": 400, "delay": 0.01})
            async with http.stream("POST", workers.urls[0], json=body, headers=headers) as response:
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        last_id = event.id or last_id
                        if event.data and "progress" in event.data:
                            progress += 1
                            if progress == 2:
                                workers.redis.command("ACL", "SETUSER", "default", "-rpush")
        assert 2 <= progress < 400
        workers.redis.command("ACL", "SETUSER", "default", "+rpush")
        final: dict[str, Any] = {}
        resume = {**headers, "last-event-id": last_id, "accept": "text/event-stream"}
        with anyio.fail_after(20):  # the worker stores the request's error once Redis takes it again
            async with http.stream("GET", workers.urls[1], headers=resume) as response:
                assert response.status_code == 200
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.data and '"id":4' in event.data:
                            final = json.loads(event.data)
                    if final:
                        break
        assert final["error"]["code"] == -32603 and final["error"]["data"] == {"reason": "store_failed"}
        gc.collect()  # an unretrieved task exception is reported when its task is collected
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert errors == []  # neither a tool failing on a RedisError nor "Task exception was never retrieved"
    assert "the session store (Redis) is unreachable" in store_outages(caplog)


async def test_a_2026_task_with_redis_down_is_503_with_retry_after_not_an_internal_error(
    tmp_path: Path,
) -> None:
    """Issue 31 item 11: the task store out of reach is the store unavailable, which a client may retry."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "gated", "_meta": meta}}
    headers = {
        **HEADERS,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "gated",
    }
    async with cluster(tmp_path, n=1) as workers, httpx.AsyncClient(timeout=30) as http:
        workers.redis.stop()
        refused = await http.post(workers.urls[0], json=body, headers=headers)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        error = refused.json()["error"]
        assert error["code"] == -32011 and error["message"].startswith("Service Unavailable: the task store")
        workers.redis.start()
        with anyio.fail_after(20):  # the worker's connections come back by themselves
            while (
                created := await http.post(workers.urls[0], json=body, headers=headers)
            ).status_code != 200:
                await anyio.sleep(0.2)
        assert created.json()["result"]["resultType"] == "task"
        workers.seen.gate.set()
