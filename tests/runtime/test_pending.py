"""A Session's own requests (runtime/pending.py): once no answer can arrive, every way of sending one fails
at once as connection closed, rather than waiting on an answer nobody will read."""

from __future__ import annotations

import anyio
import pytest

from mcpkit.protocol import events as ev
from mcpkit.protocol.capabilities import Role
from mcpkit.protocol.connection import Connection
from mcpkit.protocol.errors import CONNECTION_CLOSED, MCPError
from mcpkit.runtime.session import Session
from mcpkit.runtime.stream import memory_pair

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def nothing(session: Session, request: ev.RequestReceived) -> dict[str, object]:
    return {}


async def test_a_request_built_elsewhere_fails_at_once_once_the_peer_is_gone() -> None:
    ours, theirs = memory_pair()
    connection = Connection(Role.CLIENT, info={"name": "c", "version": "1"}, capabilities={})
    session = Session(connection, ours, nothing)
    await theirs.aclose()
    await session.run()  # the peer's end closed: the reader ends at once
    rid, message = connection.initialize("2025-11-25")
    with anyio.fail_after(5):
        with pytest.raises(MCPError) as built:
            await session.send_built(rid, message)
        with pytest.raises(MCPError) as asked:
            await session.request("ping")
    assert built.value.code == asked.value.code == CONNECTION_CLOSED
