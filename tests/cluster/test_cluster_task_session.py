"""A 2025-11-25 task talks to its client from whichever worker runs it, long after the tools/call that
created it was answered (that request's replica is gone): its elicitation and its progress go to the
session's standalone stream, as the utility allows ("clients SHOULD expect messages to be delivered on
any SSE stream, including the HTTP GET stream"), and the answer, POSTed to another worker, reaches it.
Raw HTTP against three workers on one real Redis (cluster/inprocess.py), so every message is seen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from cluster.inprocess import cluster
from mcpkit.protocol.sse import SSEDecoder
from messages import HEADERS

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"
JSON = dict[str, Any]


class RawSession:
    """One 2025-11-25 session over raw HTTP, each request to the worker the test names."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http, self.session_id = http, ""
        self.heard: list[JSON] = []  # what the GET stream carried, in order
        self.arrived = anyio.Event()

    def headers(self) -> dict[str, str]:
        return {**HEADERS, "mcp-session-id": self.session_id, "mcp-protocol-version": VERSION}

    async def open(self, url: str) -> None:
        caps: JSON = {"elicitation": {}, "tasks": {"requests": {}}}
        params = {
            "protocolVersion": VERSION,
            "capabilities": caps,
            "clientInfo": {"name": "t", "version": "1"},
        }
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        response = await self.http.post(url, json=body, headers=HEADERS)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.http.post(url, json=note, headers=self.headers())).status_code == 202

    async def request(self, url: str, rid: int, method: str, params: JSON) -> JSON:
        body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        response = await self.http.post(url, json=body, headers=self.headers())
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("application/json"):
            answer: JSON = response.json()
            return answer
        messages = [json.loads(e.data) for e in SSEDecoder().feed(response.content) if e.data]
        return next(m for m in messages if m.get("id") == rid)

    async def listen(self, url: str, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        headers = {**self.headers(), "accept": "text/event-stream"}
        async with self.http.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            task_status.started()
            decoder = SSEDecoder()
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.data:
                        self.heard.append(json.loads(event.data))
                        self.arrived.set()

    async def until(self, done: Any) -> JSON:
        """The first message heard on the GET stream for which `done` holds (waiting for it)."""
        with anyio.fail_after(20):  # a guard against hanging, not a timing assertion
            while True:
                for message in self.heard:
                    if done(message):
                        return message
                self.arrived = anyio.Event()
                await self.arrived.wait()


def progress_of(message: JSON) -> Any:
    return message["params"]["progress"] if message.get("method") == "notifications/progress" else None


async def test_a_task_asks_and_reports_progress_across_the_cluster(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=30) as http:
        w0, w1, w2 = workers.urls
        raw = RawSession(http)
        await raw.open(w0)
        async with anyio.create_task_group() as tg:
            await tg.start(raw.listen, w2)
            call = {
                "name": "survey",
                "arguments": {},
                "task": {"ttl": 60_000},
                "_meta": {"progressToken": "s1"},
            }
            task_id = (await raw.request(w1, 1, "tools/call", call))["result"]["task"]["taskId"]
            first = await raw.until(lambda m: progress_of(m) == 1)
            ask = await raw.until(lambda m: m.get("method") == "elicitation/create")
            assert ask["params"]["_meta"][RELATED] == {"taskId": task_id}
            answer = {
                "jsonrpc": "2.0",
                "id": ask["id"],
                "result": {"action": "accept", "content": {"ok": True}},
            }
            posted = await http.post(w0, json=answer, headers=raw.headers())  # not the worker that asked
            assert posted.status_code == 202
            second = await raw.until(lambda m: progress_of(m) == 2)
            result = await raw.request(w2, 2, "tasks/result", {"taskId": task_id})
            tg.cancel_scope.cancel()
        assert result["result"]["content"][0]["text"] == "survey: accept on w1"
        assert result["result"]["_meta"][RELATED] == {"taskId": task_id}
        for note in (first, second):
            assert note["params"]["progressToken"] == "s1" and note["params"]["_meta"][RELATED] == {
                "taskId": task_id
            }


async def test_a_task_waiting_on_its_client_ends_when_the_session_is_deleted(tmp_path: Path) -> None:
    async with cluster(tmp_path) as workers, httpx.AsyncClient(timeout=30) as http:
        w0, w1, w2 = workers.urls
        raw = RawSession(http)
        await raw.open(w0)
        async with anyio.create_task_group() as tg:
            await tg.start(raw.listen, w2)
            call = {"name": "survey", "arguments": {}, "task": {"ttl": 60_000}}
            task_id = (await raw.request(w1, 1, "tools/call", call))["result"]["task"]["taskId"]
            await raw.until(lambda m: m.get("method") == "elicitation/create")
            assert (await http.delete(w0, headers=raw.headers())).status_code == 204  # not where it asks
            tg.cancel_scope.cancel()
        store = workers.servers[1].tasks.store
        with anyio.fail_after(20):  # a guard: the ask's own timeout is far longer
            while (task := await store.get(task_id)) is not None and not task.status.terminal:
                await anyio.sleep(0.02)
        assert task is not None and task.status.value == "failed"
