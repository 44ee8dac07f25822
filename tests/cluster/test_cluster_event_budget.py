"""The cluster's budget for stored events (RedisBackplane(max_total_bytes=...)), through three workers
sharing one real Redis: ended streams' data goes first, then new requests get a clear 503 that the
operator sees in the log, and a request already admitted still gets its response."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import cluster
from cluster.test_cluster_sessions import call, initialize, with_session
from mcpkit.protocol.sse import SSEDecoder
from messages import HEADERS, INITIALIZE
from messages import body as message_body

pytestmark = pytest.mark.anyio
BUDGET = 1024 * 1024
WHOAMI = call(5, "whoami", {})


async def first_event_id(http: httpx.AsyncClient, url: str, headers: dict[str, str], body: bytes) -> str:
    """POST `body` and read its whole stream; the id of its first event."""
    ids: list[str] = []
    async with http.stream("POST", url, content=body, headers=headers) as response:
        assert response.status_code == 200
        decoder = SSEDecoder()
        async for chunk in response.aiter_bytes():
            ids += [event.id for event in decoder.feed(chunk) if event.id]
    return ids[0]


async def resumed_status(http: httpx.AsyncClient, url: str, headers: dict[str, str], last_id: str) -> int:
    resume = {**headers, "last-event-id": last_id, "accept": "text/event-stream"}
    async with http.stream("GET", url, headers=resume) as response:
        return response.status_code


async def test_past_the_budget_ended_streams_go_first_and_then_new_requests_get_503(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.cluster")
    options: dict[str, Any] = {"max_total_bytes": BUDGET, "ended_retention": 600.0, "max_bytes": 4 * BUDGET}
    async with cluster(tmp_path, **options) as workers, httpx.AsyncClient(timeout=30) as http:
        urls = workers.urls
        ended, holding, other = [with_session(await initialize(http, urls[0])) for _ in range(3)]

        # an answered call over the budget: its data goes (long before its retention), nothing is refused
        first = await first_event_id(http, urls[1], ended, call(2, "big", {"size": 3 * BUDGET // 2}))
        with anyio.fail_after(30):
            while await resumed_status(http, urls[2], ended, first) != 400:
                answered = await http.post(urls[0], content=call(3, "add", {"a": 1, "b": 2}), headers=other)
                assert answered.status_code == 200
                await anyio.sleep(0.2)

        # a call still running holds more than the budget: new requests are refused, clearly
        async with anyio.create_task_group() as tg:
            response: list[dict[str, Any]] = []

            async def held_call() -> None:
                body = call(4, "hold_big", {"size": 3 * BUDGET // 2}, progress=True)
                async with http.stream("POST", urls[1], content=body, headers=holding) as stream:
                    decoder = SSEDecoder()
                    async for chunk in stream.aiter_bytes():
                        response.extend(json.loads(e.data) for e in decoder.feed(chunk) if e.data)

            tg.start_soon(held_call)
            with anyio.fail_after(30):
                while (refused := await http.post(urls[2], content=WHOAMI, headers=other)).is_success:
                    await anyio.sleep(0.2)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
            assert "event log is full" in refused.json()["error"]["message"]
            opening = await http.post(urls[0], content=message_body(INITIALIZE), headers=HEADERS)
            assert opening.status_code == 503 and "event log is full" in opening.text
            workers.seen.release.set()
        assert response[-1]["id"] == 4 and response[-1]["result"]["content"][0]["text"] == "released"
        assert any("over the budget" in r.getMessage() for r in caplog.records)

        # once that stream has ended its data goes too, and requests are taken again
        with anyio.fail_after(30):
            while (taken := await http.post(urls[0], content=WHOAMI, headers=other)).is_error:
                assert taken.status_code == 503
                await anyio.sleep(0.2)
        assert taken.status_code == 200
        assert any("back under the budget" in r.getMessage() for r in caplog.records)
