"""A failover of the session store with work in flight: a primary/replica pair of real redis-servers
(tests/cluster/failover.py), the replica cut off first (so it lags: what the primary takes from then on is
lost), then the primary lost and the replica promoted under three real uvicorn workers. Nothing is lost
silently: a resumption gets the stream's later events and its response, or a clear error; an event id
is never issued twice; with `wait_replicas`, a session or a task is acknowledged only once a replica
has it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.failover import Forwarder, Pair, primary_and_replica
from cluster.inprocess import Workers, cluster
from cluster.parts import RedisProcess
from cluster.test_cluster_sessions import VERSION, call, initialize, resume, with_session
from cluster.test_cluster_streams import Reader, announced, get_stream
from mcpkit import RemoteError
from mcpkit.client import connect_http
from messages import HEADERS, INITIALIZE, body

pytestmark = pytest.mark.anyio
JSON = dict[str, Any]


@asynccontextmanager
async def failing_over(tmp_path: Path, **backplane: Any) -> AsyncIterator[tuple[Workers, Pair, Forwarder]]:
    with primary_and_replica(tmp_path) as pair:
        forwarder = Forwarder(pair.primary.port)
        async with anyio.create_task_group() as tg:
            await tg.start(forwarder.serve)
            async with cluster(tmp_path, backing=(pair.primary, forwarder.url), **backplane) as workers:
                yield workers, pair, forwarder
            tg.cancel_scope.cancel()


def fail_over(pair: Pair, forwarder: Forwarder) -> None:
    """The primary is lost; the replica (cut off earlier) now answers in its place."""
    pair.primary.stop()
    forwarder.switch(pair.replica.port)


def progress(message: JSON) -> Any:
    return message["params"]["progress"] if message.get("method") == "notifications/progress" else None


async def until_up(http: httpx.AsyncClient, workers: Workers, session_id: str) -> None:
    """Until every worker serves the session again (503, or 429 while its pool waits on connections
    that died with the old primary, until its Redis connections are back)."""
    with anyio.fail_after(30):
        for url in workers.urls:
            while True:
                add = call(99, "add", {"a": 1, "b": 1})
                answer = await http.post(url, content=add, headers=with_session(session_id))
                if answer.status_code == 200:
                    break
                assert answer.status_code in (429, 503), answer.text
                await anyio.sleep(0.2)


async def test_a_resumption_across_a_failover_gets_the_later_events_and_the_response_or_a_clear_error(
    tmp_path: Path,
) -> None:
    async with failing_over(tmp_path) as (workers, pair, forwarder), httpx.AsyncClient(timeout=20) as http:
        session_id = await initialize(http, workers.urls[0])
        headers = with_session(session_id)
        step = workers.seen.step
        async with http.stream(
            "POST", workers.urls[0], content=call(7, "paced", {"n": 3}, True), headers=headers
        ) as a:
            held = Reader(a)
            await step.send(None)
            await held.until(lambda ms: any(progress(m) == 1 for m in ms))
            pair.synced()
            pair.cut()
            await step.send(None)
            await held.until(lambda ms: any(progress(m) == 2 for m in ms))
        kept, lost = held.got[-2][0], held.got[-1][0]
        request = call(8, "slow", {"n": 40, "delay": 0.05}, True)
        async with http.stream("POST", workers.urls[1], content=request, headers=headers) as b:
            begun_after = Reader(b)
            await begun_after.until(lambda ms: any(progress(m) == 1 for m in ms))
        newer = await initialize(http, workers.urls[2])  # only the primary ever had it
        fail_over(pair, forwarder)
        await until_up(http, workers, session_id)
        await step.send(None)  # the request goes on, its events stored on the new primary
        rest = await resume(http, workers.urls[2], session_id, lost)
        assert [progress(m) for _, m in rest[:-1]] == [3]
        assert rest[-1][1]["id"] == 7 and rest[-1][1]["result"]["structuredContent"] == {"result": 3}
        assert [m for _, m in await resume(http, workers.urls[0], session_id, kept)] == [m for _, m in rest]
        assert not {eid for eid, _ in rest} & {eid for eid, _ in held.got}  # ids never issued twice
        gone = await http.get(workers.urls[1], headers={**headers, "last-event-id": begun_after.got[-1][0]})
        assert gone.status_code == 410 and "failover" in gone.text  # its request is unknown to the store now
        lost_session = await http.post(
            workers.urls[0], content=call(1, "add", {"a": 1, "b": 1}), headers=with_session(newer)
        )
        assert lost_session.status_code == 404  # the client is told, and starts a new session


async def test_a_response_a_failover_lost_is_stored_again_and_standalone_ids_never_repeat(
    tmp_path: Path,
) -> None:
    async with failing_over(tmp_path) as (workers, pair, forwarder), httpx.AsyncClient(timeout=20) as http:
        session_id = await initialize(http, workers.urls[0])
        headers = with_session(session_id)
        before: list[str] = []
        async with get_stream(http, workers.urls[1], session_id) as standalone:
            await http.post(workers.urls[2], content=call(2, "announce", {"n": 2}), headers=headers)
            await standalone.until(lambda ms: len(announced(ms)) == 2)
            request = call(3, "hold_big", {"size": 10}, True)
            async with http.stream("POST", workers.urls[0], content=request, headers=headers) as c:
                answered = Reader(c)
                await answered.until(lambda ms: any(progress(m) == 1 for m in ms))
                pair.synced()
                pair.cut()
                workers.seen.release.set()  # its response now reaches the primary only
                await answered.until(lambda ms: any(m.get("id") == 3 for m in ms))
            await http.post(workers.urls[2], content=call(4, "announce", {"n": 2}), headers=headers)
            await standalone.until(lambda ms: len(announced(ms)) == 4)
            before = [eid for eid, _ in standalone.got]
        fail_over(pair, forwarder)
        await until_up(http, workers, session_id)
        rest = await resume(http, workers.urls[2], session_id, answered.got[0][0])  # the progress it holds
        assert rest[-1][1]["id"] == 3 and rest[-1][1]["result"]["content"][0]["text"] == "released"
        async with get_stream(http, workers.urls[0], session_id, before[-1]) as again:
            await http.post(workers.urls[1], content=call(5, "announce", {"n": 2}), headers=headers)
            await again.until(lambda ms: len(announced(ms)) >= 2)
        assert not {eid for eid, _ in again.got} & set(before)


async def test_with_wait_replicas_a_session_or_a_task_is_acknowledged_only_once_a_replica_has_it(
    tmp_path: Path,
) -> None:
    options = {"wait_replicas": 1, "wait_timeout": 0.3}
    async with failing_over(tmp_path, **options) as (workers, pair, _), httpx.AsyncClient(timeout=20) as http:
        async with connect_http(workers.url, protocol_version=VERSION) as client:
            assert (await (await client.call_tool_as_task("blob", {"kib": 1})).result())["content"]
            pair.cut()  # no replica follows the primary any more
            with pytest.raises(RemoteError) as refused:
                await client.call_tool_as_task("blob", {"kib": 1})
            assert refused.value.code == -32011 and "replica" in str(refused.value)
        opened = await http.post(workers.urls[0], content=body(INITIALIZE), headers=HEADERS)
        assert opened.status_code == 503 and "mcp-session-id" not in opened.headers  # no session to vanish


def stored_status(redis: RedisProcess, task_id: str) -> str | None:
    """The status of the task as `redis` has it (None: it has no such task)."""
    raw = redis.command("HGET", f"mcp:{{t}}:task-rec:{task_id}", "data")
    return None if raw is None else str(json.loads(raw)["status"])


async def test_with_wait_replicas_a_task_is_reported_ended_only_once_a_replica_has_its_end(
    tmp_path: Path,
) -> None:
    options = {"wait_replicas": 1, "wait_timeout": 0.3}
    async with (
        failing_over(tmp_path, **options) as (workers, pair, _),
        connect_http(workers.url, protocol_version=VERSION) as client,
    ):
        done = await client.call_tool_as_task("blob", {"kib": 1})
        assert (await done.result())["content"]
        assert done.task_id is not None and stored_status(pair.replica, done.task_id) == "completed"
        gated = await client.call_tool_as_task("gated", {})
        pair.cut()  # the task's end now reaches the primary only
        workers.seen.gate.set()
        with pytest.raises(RemoteError) as unconfirmed:
            await gated.result()
        assert unconfirmed.value.code == -32011 and "replicas did not confirm" in str(unconfirmed.value)
        await anyio.to_thread.run_sync(pair.follow)  # a full resync: the workers go on meanwhile
        assert (await gated.result())["content"][0]["text"] == "through"
        assert gated.task_id is not None and stored_status(pair.replica, gated.task_id) == "completed"


async def test_a_task_end_a_failover_lost_is_written_again_by_the_worker_that_ended_it(
    tmp_path: Path,
) -> None:
    async with (
        failing_over(tmp_path) as (workers, pair, forwarder),
        connect_http(workers.url, protocol_version=VERSION) as client,
    ):
        gated = await client.call_tool_as_task("gated", {})
        task_id = gated.task_id
        assert task_id is not None
        pair.synced()
        pair.cut()  # the task's end now reaches the primary only
        workers.seen.gate.set()
        with anyio.fail_after(10):
            while stored_status(pair.primary, task_id) != "completed":
                await anyio.sleep(0.05)
        assert stored_status(pair.replica, task_id) == "working"
        fail_over(pair, forwarder)
        with anyio.fail_after(30):  # it would read as working until its ttl, its leg long over
            while True:
                try:
                    result = await gated.result()
                    break
                except RemoteError as outage:  # until the workers reach the promoted replica
                    assert outage.code in (-32011, -32603, -32010), outage
                    await anyio.sleep(0.2)
        assert result["content"][0]["text"] == "through"
        assert stored_status(pair.replica, task_id) == "completed"
