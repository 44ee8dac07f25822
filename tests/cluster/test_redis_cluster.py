"""The cluster's flows on a real Redis Cluster of three primaries (tests/cluster/redis_cluster.py): the
same tests as on one Redis (`inprocess.STORE` switches what backs the three workers), both protocol eras,
plus tasks created, updated and cancelled through different workers. On one Redis every key is in one
place; on a cluster a script or a MULTI that touches two slots fails with CROSSSLOT, so these show that
no request's work leaves its session's slot."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from redis.cluster import RedisCluster

from cluster import test_cluster_sessions as sessions
from cluster import test_cluster_streams as streams
from cluster import test_cluster_task_session as task_session
from cluster.inprocess import STORE, cluster
from cluster.redis_cluster import redis_cluster
from mcpkit.client import connect_http

pytestmark = pytest.mark.anyio
Flow = Callable[[Path], Awaitable[None]]

FLOWS: list[Flow] = [
    sessions.test_every_request_of_a_session_is_served_wherever_it_lands,
    sessions.test_an_elicitation_and_a_sampling_answered_on_other_workers_reach_the_handler,
    sessions.test_progress_arrives_and_a_cancel_sent_to_another_worker_stops_the_handler,
    sessions.test_subscribed_updates_and_list_changes_reach_the_get_stream_wherever_it_is,
    sessions.test_a_log_level_set_on_one_worker_filters_logs_of_a_handler_on_another,
    sessions.test_delete_on_one_worker_ends_the_session_on_every_worker,
    sessions.test_a_stream_dropped_on_one_worker_resumes_on_another_with_nothing_lost_or_repeated,
    sessions.test_a_second_standalone_stream_elsewhere_takes_over_the_first,
    sessions.test_max_sessions_counts_the_sessions_of_every_worker,
    sessions.test_messages_sent_while_no_get_stream_is_open_wait_for_the_next_one_on_any_worker,
    sessions.test_the_stateless_era_needs_only_a_shared_state_key,
    sessions.test_a_listen_stream_on_one_worker_hears_changes_published_on_the_others,
    streams.test_resuming_a_stream_whose_response_is_stored_replays_it_and_ends_at_once,
    streams.test_a_list_changed_sent_while_a_session_has_no_get_open_arrives_on_its_next_one,
    task_session.test_a_task_asks_and_reports_progress_across_the_cluster,
    task_session.test_a_task_waiting_on_its_client_ends_when_the_session_is_deleted,
]


@pytest.fixture
def on_redis_cluster() -> Iterator[None]:
    token = STORE.set("redis-cluster")
    try:
        yield
    finally:
        STORE.reset(token)


@pytest.mark.parametrize("flow", FLOWS, ids=[flow.__name__.removeprefix("test_") for flow in FLOWS])
async def test_a_cross_worker_flow_runs_on_a_redis_cluster_as_on_one_redis(
    flow: Flow, tmp_path: Path, on_redis_cluster: None
) -> None:
    await flow(tmp_path)


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_tasks_are_created_updated_and_cancelled_through_any_worker_of_a_redis_cluster(
    version: str, tmp_path: Path, on_redis_cluster: None
) -> None:
    async with cluster(tmp_path) as workers, connect_http(workers.url, protocol_version=version) as client:
        done = await client.call_tool_as_task("blob", {"kib": 1})
        assert (await done.result())["content"][0]["text"] == "x" * 1024
        assert done.status == "completed"
        held = await client.call_tool_as_task("gated")
        assert (await held.refresh())["status"] == "working"
        await held.cancel()  # through another worker than the one running its leg
        with anyio.fail_after(10):
            while (await held.refresh())["status"] != "cancelled":
                await anyio.sleep(0.05)
        assert not workers.seen.gate.is_set()  # it never ran to its end: the cancel stopped it
        store = RedisCluster.from_url(workers.redis_url)
        try:
            records = list(store.scan_iter(match="mcp:{t}:task-rec:*"))
        finally:
            store.close()
        assert len(records) == 2  # both tasks, in the task store's one slot


@asynccontextmanager
async def replicated(tmp_path: Path, wait_timeout: float) -> AsyncIterator[tuple[Any, Any, Any, str]]:
    """Three workers on a Redis Cluster with a replica per primary and `wait_replicas=1`; a session opened
    and a task of it completed (confirmed on a replica): (the cluster, the workers, the session, the task)."""
    with redis_cluster(tmp_path, replicas=1) as local:
        backing = (local.nodes[0], local.url)
        options: dict[str, Any] = {"cluster": True, "wait_replicas": 1, "wait_timeout": wait_timeout}
        async with (
            cluster(tmp_path, backing=backing, **options) as workers,
            httpx.AsyncClient(timeout=20) as http,
        ):
            w0, w1, w2 = workers.urls
            raw = task_session.RawSession(http)
            await raw.open(w0)  # its agreement confirmed on a replica before the answer
            created = await raw.request(w1, 1, "tools/call", BLOB)  # confirmed on a replica too
            task_id = created["result"]["task"]["taskId"]
            with anyio.fail_after(10):
                while (await raw.request(w2, 5, "tasks/get", {"taskId": task_id}))["result"][
                    "status"
                ] != "completed":
                    await anyio.sleep(0.05)
            # the next task's confirmation covers the first one's completion (replication is in order)
            await raw.request(w0, 6, "tools/call", BLOB)
            yield local, workers, raw, task_id


BLOB = {"name": "blob", "arguments": {"kib": 1}, "task": {"ttl": 60_000}}


async def test_a_redis_cluster_failover_keeps_what_wait_replicas_confirmed_and_the_workers_follow_it(
    tmp_path: Path,
) -> None:
    async with replicated(tmp_path, 5.0) as (local, workers, raw, task_id):
        http, (w0, w1, w2) = raw.http, workers.urls
        local.take_over(local.owner(f"mcp:{{{raw.session_id}}}:s"))
        with anyio.fail_after(30):  # 503 until each worker's client learns the new topology
            for url in workers.urls:
                while (await http.post(url, json=ADD, headers=raw.headers())).status_code != 200:
                    await anyio.sleep(0.2)
        async with streams.get_stream(http, w0, raw.session_id) as standalone:
            announce = {"name": "announce", "arguments": {"n": 2}}
            await raw.request(w1, 3, "tools/call", announce)
            # wake-ups reach the new primary's subscribers
            await standalone.until(lambda ms: len(streams.announced(ms)) == 2)
        polled = await raw.request(w2, 4, "tasks/get", {"taskId": task_id})
        assert polled["result"]["status"] == "completed"


async def test_an_ended_task_confirmed_before_its_primary_is_lost_is_read_after_the_takeover(
    tmp_path: Path,
) -> None:
    """With wait_replicas=1, the promoted replica has no replica of its own: an end confirmed before the
    takeover is still answered (marked confirmed), not refused as unconfirmable."""
    async with replicated(tmp_path, 2.0) as (local, workers, raw, task_id):
        local.take_over(local.owner("mcp:{t}:w"))
        with anyio.fail_after(30):
            while "result" not in (
                polled := await raw.request(workers.urls[2], 4, "tasks/get", {"taskId": task_id})
            ):
                assert polled["error"]["code"] == -32011, polled  # until the workers follow the takeover
                await anyio.sleep(0.2)
        assert polled["result"]["status"] == "completed"


ADD = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
}
