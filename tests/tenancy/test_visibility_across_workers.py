"""list_changed follows the visibility hook across a cluster: two real workers (uvicorn, each with its
RedisBackplane) on one real redis-server. A catalog change made as a deploy makes it (on every worker,
published from each) reaches, on the other worker, exactly the principals whose view it changed: a
handshake session whose GET stream is open, one that opens its GET only after the change, and a
2026-07-28 subscriptions/listen stream. Each reader reads up to a marker published after the change (a
log for sessions, a resources/updated for listen streams), so "nothing else arrived" needs no clock. On
one Redis and on a Redis Cluster of three primaries (each session's scripts stay in its slot)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tenancy_world import RESOURCE, Principal, protected

from cluster.inprocess import STORE, Workers, cluster
from cluster.test_cluster_streams import Reader
from mcpkit.auth import AccessToken
from mcpkit.client.client import Client
from mcpkit.transports.http_client import HTTPClientStream
from messages import HEADERS, INITIALIZE, body

pytestmark = pytest.mark.anyio

CHANGED = "notifications/tools/list_changed"
ACME = Principal("ann", "acme", frozenset())  # sees the tool added: its view changes
GLOBEX = Principal("bob", "globex", frozenset())  # does not: its view stays the same
NOTE = "mem://note"


def sees(auth: AccessToken | None, kind: str, item: Any) -> bool:
    """An item with a tenant in its meta is that tenant's alone."""
    tenant = (getattr(item, "meta", None) or {}).get("tenant")
    return tenant is None or (auth is not None and auth.claims.get("tenant") == tenant)


def keyed(principal: Principal, session_id: str | None = None) -> dict[str, str]:
    headers = {**HEADERS, "authorization": f"Bearer {principal.token}"}
    if session_id is not None:
        headers |= {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    return headers


async def session_of(http: httpx.AsyncClient, url: str, principal: Principal) -> str:
    opened = await http.post(url, content=body(INITIALIZE), headers=keyed(principal))
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    assert (await http.post(url, content=note, headers=keyed(principal, session_id))).status_code == 202
    return session_id


@asynccontextmanager
async def get_stream(
    http: httpx.AsyncClient, url: str, principal: Principal, sid: str
) -> AsyncIterator[Reader]:
    """The session's standalone GET stream, open (its catch-up done) once this yields."""
    headers = {**keyed(principal, sid), "accept": "text/event-stream"}
    async with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        yield Reader(response)


def marked(messages: list[dict[str, Any]]) -> bool:
    return any(m.get("method") == "notifications/message" for m in messages)


def changes(messages: list[dict[str, Any]]) -> list[str]:
    return [m["method"] for m in messages if m["method"] != "notifications/message"]


@asynccontextmanager
async def listening(url: str, principal: Principal) -> AsyncIterator[Any]:
    """A 2026-07-28 subscriptions/listen stream on the worker at `url`."""
    async with anyio.create_task_group() as tg, httpx.AsyncClient(timeout=10) as http:
        http.headers["authorization"] = f"Bearer {principal.token}"
        stream = HTTPClientStream(url, http, tg)
        try:
            async with (
                Client(stream, era="modern", cache=False) as client,
                client.listen(tools=True, resources=True, uris=[NOTE]) as subscription,
            ):
                yield subscription
        finally:
            await stream.aclose()
            tg.cancel_scope.cancel()


async def heard_until_note(subscription: Any) -> list[str]:
    heard: list[str] = []
    with anyio.fail_after(10):
        async for method, params in subscription:
            if method == "notifications/resources/updated" and params.get("uri") == NOTE:
                return heard
            heard.append(method)
    raise AssertionError("the listen stream ended before the marker")


def deploy(workers: Workers) -> None:
    """The change: a tool only acme sees, added on every worker as a deploy adds it (each publishes it:
    a session hears it once)."""
    for server in workers.servers:
        server.add_tool(lambda: "acme's books", name="acme_books", meta={"tenant": "acme"})


@pytest.fixture(params=["redis", "redis-cluster"])
def store(request: pytest.FixtureRequest) -> Iterator[None]:
    """What backs the workers: one redis-server, or a Redis Cluster of three primaries."""
    token = STORE.set(request.param)
    try:
        yield
    finally:
        STORE.reset(token)


async def test_a_catalog_change_reaches_sessions_on_another_worker_only_for_principals_whose_view_changed(
    store: None, tmp_path: Path
) -> None:
    def wrap(app: Any) -> Any:
        return protected(app, [ACME, GLOBEX], RESOURCE)

    async with (
        cluster(tmp_path, n=2, wrap=wrap, server_options={"visible": sees}) as workers,
        httpx.AsyncClient(timeout=10) as http,
        AsyncExitStack() as stack,
    ):
        b = workers.urls[1]
        held = {p: await session_of(http, workers.urls[0], p) for p in (ACME, GLOBEX)}
        later = {p: await session_of(http, workers.urls[0], p) for p in (ACME, GLOBEX)}
        streams = {p: await stack.enter_async_context(get_stream(http, b, p, held[p])) for p in held}
        listens = {p: await stack.enter_async_context(listening(b, p)) for p in held}
        deploy(workers)
        with anyio.fail_after(10):  # the notification is on its way: published on the bus by now
            await streams[ACME].until(lambda got: CHANGED in changes(got))
        await workers.servers[0].log("info", "marker")
        await workers.servers[0].notify_resource_updated(NOTE)
        for principal, stream in streams.items():
            heard = changes(await stream.until(marked))
            assert heard == ([CHANGED] if principal is ACME else []), principal.subject
        for principal, subscription in listens.items():
            heard = await heard_until_note(subscription)
            assert heard == ([CHANGED] if principal is ACME else []), principal.subject
        for principal, session_id in later.items():  # no GET was open: caught up when one opens
            async with get_stream(http, b, principal, session_id) as stream:
                await workers.servers[0].log("info", "marker")
                heard = changes(await stream.until(marked))
            assert heard == ([CHANGED] if principal is ACME else []), principal.subject
