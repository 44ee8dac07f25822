"""resources/subscribe is bounded in one process: a session's count of subscriptions and a URI's length
(Server(peers=Peers(max_subscriptions=, max_uri_length=))); past either, -32602 and nothing is kept."""

from __future__ import annotations

import pytest

from mcpkit import RemoteError, Server
from mcpkit.server.peers import Peers
from mcpkit.testing import connect

pytestmark = pytest.mark.anyio


def notes_server(**limits: int | None) -> Server:
    server = Server("notes", peers=Peers(**limits))

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return name

    return server


async def test_a_session_subscribes_to_at_most_max_subscriptions_resources() -> None:
    server = notes_server(max_subscriptions=3)
    async with connect(server, era="handshake") as client:
        for name in "abc":
            await client.subscribe(f"notes://{name}")
        await client.subscribe("notes://a")  # already subscribed: not another one
        with pytest.raises(RemoteError) as refused:
            await client.subscribe("notes://d")
        await client.unsubscribe("notes://a")
        await client.subscribe("notes://d")
    assert refused.value.code == -32602 and "at most 3" in str(refused.value)


async def test_a_uri_longer_than_max_uri_length_is_refused_and_not_kept() -> None:
    server = notes_server(max_subscriptions=2)
    async with connect(server, era="handshake") as client:
        await client.subscribe("notes://" + "a" * (2048 - len("notes://")))  # the default bound, exactly
        with pytest.raises(RemoteError) as refused:
            await client.subscribe("notes://" + "a" * 1024 * 1024)
        await client.subscribe("notes://b")  # the refused one took no place
        with pytest.raises(RemoteError) as full:
            await client.subscribe("notes://c")
    assert refused.value.code == -32602 and "2048 characters" in str(refused.value)
    assert full.value.code == -32602


async def test_none_lifts_both_bounds() -> None:
    server = notes_server(max_subscriptions=None, max_uri_length=None)
    async with connect(server, era="handshake") as client:
        for i in range(150):
            await client.subscribe(f"notes://{i}")
        await client.subscribe("notes://" + "a" * 10_000)
