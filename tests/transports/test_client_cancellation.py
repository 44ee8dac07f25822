"""A cancelled task stays cancelled: leaving a client's `async with` during an in-flight call.

Every way a caller cancels (asyncio.timeout, anyio.fail_after / move_on_after, Task.cancel), both
eras, both transports (a real stdio child, a real uvicorn): the cancellation reaches the caller,
and the code after the client's block never runs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import sniffio
from noisy_server import server as noisy
from test_http_client import serving

from mcpkit import Client
from mcpkit.client import connect_http, connect_stdio
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio

NOISY = str(Path(__file__).with_name("noisy_server.py"))
SOON = 0.3  # after the call is sent, the caller gives up
Opener = Callable[[], AbstractAsyncContextManager[Client]]


@asynccontextmanager
async def client_over(transport: str, era: str) -> AsyncIterator[Opener]:
    """An opener of a client to a server whose `nap` tool sleeps as long as asked."""
    if transport == "stdio":
        yield lambda: connect_stdio([sys.executable, NOISY], era=era, timeout=30)
        return
    async with serving(StreamableHTTPApp(noisy)) as url:
        yield lambda: connect_http(url, era=era, timeout=30)


async def call_under_asyncio_timeout(open_client: Opener, reached: list[str]) -> None:
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(None) as timeout:
            async with open_client() as client:
                timeout.reschedule(asyncio.get_running_loop().time() + SOON)
                await client.call_tool("nap", {"seconds": 30})
            reached.append("after the client block")
        reached.append("after the timeout block")


async def call_under_fail_after(open_client: Opener, reached: list[str]) -> None:
    with pytest.raises(TimeoutError):
        with anyio.fail_after(60) as scope:
            async with open_client() as client:
                scope.deadline = anyio.current_time() + SOON
                await client.call_tool("nap", {"seconds": 30})
            reached.append("after the client block")


async def call_under_move_on_after(open_client: Opener, reached: list[str]) -> None:
    with anyio.move_on_after(60) as scope:
        async with open_client() as client:
            scope.deadline = anyio.current_time() + SOON
            await client.call_tool("nap", {"seconds": 30})
        reached.append("after the client block")
    assert scope.cancelled_caught


async def call_in_a_task_cancelled_from_outside(open_client: Opener, reached: list[str]) -> None:
    calling = asyncio.Event()

    async def call() -> None:
        async with open_client() as client:
            calling.set()
            await client.call_tool("nap", {"seconds": 30})
        reached.append("after the client block")

    task = asyncio.create_task(call())
    await asyncio.wait_for(calling.wait(), 20)
    await asyncio.sleep(SOON)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def leave_during_a_call(
    transport: str, era: str, cancel: Callable[[Opener, list[str]], Awaitable[None]]
) -> None:
    reached: list[str] = []
    async with client_over(transport, era) as open_client:
        with anyio.fail_after(20):  # a swallowed cancellation must not turn into a hang either
            await cancel(open_client, reached)
    assert reached == []


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize(
    "cancel",
    [call_under_asyncio_timeout, call_in_a_task_cancelled_from_outside],
    ids=["asyncio.timeout", "Task.cancel"],
)
async def test_leaving_the_client_block_during_a_call_keeps_the_task_cancelled(
    transport: str, era: str, cancel: Callable[[Opener, list[str]], Awaitable[None]]
) -> None:
    await leave_during_a_call(transport, era, cancel)


@pytest.mark.both_loops
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize(
    "cancel", [call_under_fail_after, call_under_move_on_after], ids=["fail_after", "move_on_after"]
)
async def test_leaving_the_client_block_in_an_anyio_scope_keeps_the_task_cancelled_on_either_loop(
    transport: str, era: str, cancel: Callable[[Opener, list[str]], Awaitable[None]]
) -> None:
    await leave_during_a_call(transport, era, cancel)


def timeout(seconds: float) -> AbstractAsyncContextManager[Any]:
    """asyncio.timeout on asyncio (the native way this test is about there), anyio's on trio."""
    if sniffio.current_async_library() == "asyncio":
        return asyncio.timeout(seconds)
    return _fail_after(seconds)


@asynccontextmanager
async def _fail_after(seconds: float) -> AsyncIterator[None]:
    with anyio.fail_after(seconds):
        yield


@pytest.mark.both_loops
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["modern", "handshake"])
async def test_a_timeout_while_listening_reaches_the_caller_and_the_client_goes_on(
    transport: str, era: str
) -> None:
    reached: list[str] = []
    async with client_over(transport, era) as open_client, open_client() as client:
        for _ in range(3):
            with pytest.raises(TimeoutError):
                async with timeout(SOON), client.listen(tools=True) as subscription:
                    async for _note in subscription:
                        pass
                    reached.append("after the subscription ended")
        await client.ping()
    assert reached == []
