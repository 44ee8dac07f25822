"""Redis behind Sentinel: three workers reach a primary/replica pair through a `redis+sentinel://` URL
naming three real redis-sentinels (tests/cluster/sentinel.py). The primary is killed with calls in flight;
the sentinels promote the replica and the workers follow it. Every call ends with its result or an error
the client sees, a resumption never gets 400 for an event id the server issued, and the session and new
ones are served by the promoted replica."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import Workers, cluster
from cluster.sentinel import Sentinels, sentinel_group
from cluster.test_cluster_sessions import call, initialize, with_session
from mcpkit.cluster.sentinel import SentinelTarget, parse
from mcpkit.protocol.sse import SSEDecoder

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]
CALLS = 4


def test_a_sentinel_url_names_its_sentinels_service_database_and_password() -> None:
    assert parse("redis+sentinel://:s3cret@a:26380,b,[::1]:7000/mymaster/2") == SentinelTarget(
        (("a", 26380), ("b", 26379), ("::1", 7000)), "mymaster", 2, None, "s3cret", False
    )
    assert "s3cret" not in repr(parse("redis+sentinel://:s3cret@a/m"))
    tls = parse(
        "rediss+sentinel://u:p%40ss@one:1/svc/3?ssl_ca_certs=/ca.pem&socket_timeout=5"
    ).primary_options()
    assert tls["ssl"] and tls["ssl_ca_certs"] == "/ca.pem" and tls["socket_timeout"] == 5
    assert (tls["username"], tls["password"], tls["db"]) == ("u", "p@ss", 3) and "host" not in tls
    for wrong in ("redis://a/svc", "redis+sentinel://a:1", "redis+sentinel:///svc", "redis+sentinel://a:x/s"):
        with pytest.raises(ValueError):
            parse(wrong)


class Call:
    """One tools/call over raw HTTP, followed to its end across the failover: its POST stream, then
    resumptions with the last event id it got, on the next worker each time."""

    def __init__(
        self, http: httpx.AsyncClient, workers: Workers, session_id: str, rid: int, tool: str, arguments: JSON
    ) -> None:
        self.http = http
        self.workers = workers
        self.session_id = session_id
        self.rid = rid
        self.request = call(rid, tool, arguments, True)
        self.last_id: str | None = None
        self.progressed = anyio.Event()
        self.end: JSON | None = None  # the response, a result or an error
        self.refused: list[tuple[int, str]] = []  # every 4xx a resumption got (400 must never be one)

    async def run(self) -> None:
        url, headers = self.workers.urls[self.rid % 3], with_session(self.session_id)
        async with self.http.stream("POST", url, content=self.request, headers=headers) as r:
            assert r.status_code == 200
            await self._read(r)
        turn = self.rid
        while self.end is None:
            turn += 1
            await self._resume(self.workers.urls[turn % 3])

    async def _resume(self, url: str) -> None:
        headers = {**with_session(self.session_id), "accept": "text/event-stream"}
        assert self.last_id is not None  # the POST stream had its priming event
        headers["last-event-id"] = self.last_id
        try:
            async with self.http.stream("GET", url, headers=headers) as r:
                if r.status_code in (429, 503):  # the store away, or the worker's connections not back
                    await anyio.sleep(0.2)
                elif r.status_code != 200:
                    self.refused.append((r.status_code, (await r.aread()).decode()))
                    self.end = {"http": r.status_code}  # a clear error the client sees: no more to wait for
                else:
                    await self._read(r)
        except httpx.HTTPError:  # the worker ended the stream with the store gone: resume again
            await anyio.sleep(0.2)

    async def _read(self, response: httpx.Response) -> None:
        decoder = SSEDecoder()
        try:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    self.last_id = event.id or self.last_id
                    message = json.loads(event.data) if event.data else {}
                    if message.get("method") == "notifications/progress":
                        self.progressed.set()
                    if message.get("id") == self.rid:
                        self.end = message
        except httpx.HTTPError:
            pass  # a stream cut short: what came is kept, the rest comes by resumption


async def until_served(http: httpx.AsyncClient, url: str) -> str:
    """A new session once the workers reach the promoted primary (503 until then)."""
    with anyio.fail_after(30):
        while True:
            try:
                return await initialize(http, url)
            except AssertionError:
                await anyio.sleep(0.2)


@pytest.mark.slow
async def test_calls_in_flight_when_sentinel_fails_the_primary_over_each_end_with_a_result_or_an_error(
    tmp_path: Path,
) -> None:
    with sentinel_group(tmp_path) as group:
        backing = (group.primary, group.url)
        async with cluster(tmp_path, backing=backing) as workers, httpx.AsyncClient(timeout=30) as http:
            session_id = await initialize(http, workers.urls[0])
            slow = {"n": 60, "delay": 0.05}  # progress every 50 ms: writing when the primary goes
            calls = [Call(http, workers, session_id, rid, "slow", slow) for rid in range(1, CALLS + 1)]
            waiting = Call(http, workers, session_id, CALLS + 1, "hold_big", {"size": 10})  # writes nothing
            calls.append(waiting)
            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for one in calls:
                        tg.start_soon(one.run)
                    for one in calls:
                        await one.progressed.wait()
                    await anyio.to_thread.run_sync(fail_over, group)
                    workers.seen.release.set()  # its response goes to the promoted replica
            for one in calls:
                assert all(status != 400 for status, _ in one.refused), one.refused
                assert one.end is not None and {"result", "error", "http"} & set(one.end), one.end
            assert waiting.end is not None and waiting.end["result"]["content"][0]["text"] == "released"
            fresh = await until_served(http, workers.urls[1])
            added = await http.post(
                workers.urls[2], content=call(9, "add", {"a": 2, "b": 3}), headers=with_session(fresh)
            )
            assert added.status_code == 200 and '"structuredContent":{"result":5}' in added.text
            assert group.primary_port() == group.replica.port


def fail_over(group: Sentinels) -> None:
    """The primary killed; returns once the sentinels name the replica as the primary (blocking)."""
    group.kill_primary()
    deadline = time.monotonic() + 30
    while group.primary_port() != group.replica.port:
        assert time.monotonic() < deadline, "the sentinels did not promote the replica"
        time.sleep(0.1)
