"""In-memory wiring of a Client to a Server: real JSON bytes cross, no process, no socket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from .client.client import Client
from .runtime.groups import single_error
from .runtime.stream import memory_pair
from .server.server import Server

__all__ = ["connect"]


@asynccontextmanager
async def connect(server: Server, **client_options: Any) -> AsyncIterator[Client]:
    """A Client talking to `server` through an in-memory stream pair."""
    client_end, server_end = memory_pair()
    with single_error():
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            try:
                async with Client(client_end, **client_options) as client:
                    yield client
            finally:
                await client_end.aclose()
                tg.cancel_scope.cancel()
