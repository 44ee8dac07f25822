"""A worker keeps the sessions it served running between their requests (cluster/warm.py): the next
request of a session on the same worker is served by the session already there, unless the shared record
changed meanwhile (a log level set on another worker), the session ended, or `warm_sessions=0`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import Workers, cluster
from cluster.test_cluster_sessions import call, initialize, with_session

pytestmark = pytest.mark.anyio


async def result_of(http: httpx.AsyncClient, url: str, session_id: str, rid: int, name: str) -> Any:
    answered = await http.post(url, content=call(rid, name, {}), headers=with_session(session_id))
    assert answered.status_code == 200, answered.text
    return events_of(answered)[-1]["result"]["content"][0]["text"]


def events_of(response: httpx.Response) -> list[dict[str, Any]]:
    lines = response.text.splitlines()
    return [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: {")]


async def served_by(workers: Workers, http: httpx.AsyncClient, session_id: str, rids: range) -> set[str]:
    """The Session objects of worker 0 that served tools/call `rids` there, one after the other."""
    return {await result_of(http, workers.urls[0], session_id, rid, "session_object") for rid in rids}


async def test_a_sessions_requests_on_one_worker_are_served_by_the_session_kept_there(tmp_path: Path) -> None:
    async with cluster(tmp_path, n=2) as workers, httpx.AsyncClient(timeout=30) as http:
        session_id = await initialize(http, workers.urls[1])
        assert len(await served_by(workers, http, session_id, range(2, 6))) == 1
        assert len(workers.servers[0].peers) == 1  # running between requests


async def test_with_warm_sessions_off_every_request_restores_the_session(tmp_path: Path) -> None:
    async with cluster(tmp_path, n=2, warm_sessions=0) as workers, httpx.AsyncClient(timeout=30) as http:
        session_id = await initialize(http, workers.urls[1])
        assert len(await served_by(workers, http, session_id, range(2, 6))) == 4
        assert len(workers.servers[0].peers) == 0


async def test_a_log_level_set_on_another_worker_is_heard_by_the_kept_session(tmp_path: Path) -> None:
    async with cluster(tmp_path, n=2) as workers, httpx.AsyncClient(timeout=30) as http:
        session_id = await initialize(http, workers.urls[1])
        first = await served_by(workers, http, session_id, range(2, 3))
        level = {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "error"}}
        assert (
            await http.post(workers.urls[1], json=level, headers=with_session(session_id))
        ).status_code == 200
        chatter = await http.post(
            workers.urls[0], content=call(4, "chatter", {}), headers=with_session(session_id)
        )
        logged = [
            e["params"]["data"] for e in events_of(chatter) if e.get("method") == "notifications/message"
        ]
        assert logged == ["loud"]  # not the "quiet" debug line the level before let through
        assert await served_by(workers, http, session_id, range(5, 6)) != first  # rebuilt from the record


async def test_a_session_ended_on_another_worker_is_not_kept(tmp_path: Path) -> None:
    async with cluster(tmp_path, n=2) as workers, httpx.AsyncClient(timeout=30) as http:
        session_id = await initialize(http, workers.urls[1])
        await served_by(workers, http, session_id, range(2, 3))
        assert len(workers.servers[0].peers) == 1
        assert (await http.delete(workers.urls[1], headers=with_session(session_id))).status_code == 204
        for _ in range(100):
            if len(workers.servers[0].peers) == 0:
                break
            await anyio.sleep(0.05)
        assert len(workers.servers[0].peers) == 0
