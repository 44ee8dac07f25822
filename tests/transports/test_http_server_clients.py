"""Per-client caps of the Streamable HTTP server, where `session_key` tells clients apart (real uvicorn)."""

from __future__ import annotations

import anyio
import httpx
import pytest
from test_http_server import init_body, make_server, running
from test_http_stateless import request

from mcpkit.transports.http_server import StreamableHTTPApp, client_address
from mcpkit.transports.http_server.asgi import Scope
from messages import HEADERS

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def bearer(scope: Scope) -> str | None:
    """The identity a deployment would take from a verified token; here the raw Authorization value."""
    for name, value in scope["headers"]:
        if name.lower() == b"authorization":
            return str(value.decode("latin-1"))
    return None


def as_(who: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {**(headers or HEADERS), "authorization": f"Bearer {who}"}


async def test_one_client_cannot_hold_more_than_its_share_of_sessions() -> None:
    app = StreamableHTTPApp(make_server(), session_key=bearer, max_sessions_per_client=3, max_sessions=100)
    async with running(app) as url, httpx.AsyncClient(timeout=5) as http:
        alice: list[dict[str, str]] = []
        for _ in range(3):
            response = await http.post(url, content=init_body(), headers=as_("alice"))
            assert response.status_code == 200
            alice.append({**as_("alice"), "mcp-session-id": response.headers["mcp-session-id"]})
        refused = await http.post(url, content=init_body(), headers=as_("alice"))
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["code"] == -32010
        assert "already holds 3 sessions" in refused.json()["error"]["message"]
        assert (await http.post(url, content=init_body(), headers=as_("bob"))).status_code == 200
        anonymous = await http.post(url, content=init_body(), headers=HEADERS)
        assert anonymous.status_code == 200  # an unidentified client is not counted
        assert (await http.delete(url, headers=alice[0])).status_code == 204
        with anyio.fail_after(5):  # her ended session's slot comes back
            while (await http.post(url, content=init_body(), headers=as_("alice"))).status_code != 200:
                await anyio.sleep(0.02)
        assert app._registry.per_client.counts == {"Bearer alice": 3, "Bearer bob": 1}


async def test_one_client_cannot_hold_more_than_its_share_of_stateless_requests() -> None:
    app = StreamableHTTPApp(make_server(), session_key=bearer, max_stateless_in_flight_per_client=2)
    async with running(app) as url, httpx.AsyncClient(timeout=5) as http, anyio.create_task_group() as tg:
        opened = anyio.Semaphore(0)

        async def listen(rid: int) -> None:
            hdrs, body = request(rid, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            async with http.stream("POST", url, content=body, headers=as_("alice", hdrs)) as response:
                assert response.status_code == 200
                opened.release()
                async for _ in response.aiter_bytes():
                    pass

        for rid in (1, 2):
            tg.start_soon(listen, rid)
        with anyio.fail_after(5):
            for _ in (1, 2):
                await opened.acquire()
        hdrs, body = request(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        refused = await http.post(url, content=body, headers=as_("alice", hdrs))
        served = await http.post(url, content=body, headers=as_("bob", hdrs))
        tg.cancel_scope.cancel()
    assert refused.status_code == 429 and refused.json()["id"] == 3
    assert refused.json()["error"]["code"] == -32010
    assert served.status_code == 200 and served.json()["result"]["content"][0]["text"] == "3"


def test_client_address_is_the_peer_ip_when_the_server_gives_one() -> None:
    assert client_address({"client": ("10.0.0.7", 5555)}) == "10.0.0.7"
    assert client_address({"client": None}) is None
