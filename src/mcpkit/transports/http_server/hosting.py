"""Where the Streamable HTTP server's session tasks live, so sessions outlive the request that made them.

With ASGI lifespan (uvicorn) they live in a task group entered on startup and cancelled on shutdown.
Without it (httpx.ASGITransport, a mount whose router does not forward lifespan) the first request starts
that task group in a task of the event loop itself (asyncio or trio); `aclose()` ends it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ...runtime._native import Detached, spawn_detached
from .asgi import Receive, Send

__all__ = ["TaskHost"]


class TaskHost:
    """A task group for session tasks, plus one background task (`keeper`) running as long as it does."""

    def __init__(
        self,
        keeper: Callable[[], Coroutine[Any, Any, None]],
        on_shutdown: Callable[[], None],
        hold: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
        check: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._keeper = keeper
        self._check = check  # at lifespan startup, before anything is held: raises for a bad configuration
        self._on_shutdown = on_shutdown
        self._hold = hold or nullcontext  # what stays open while the host runs (the server's lifespan)
        self._tg: TaskGroup | None = None
        self._hosted: anyio.Event | None = None
        self._host_task: Detached | None = None

    async def lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        try:
            if self._check is not None:
                await self._check()
            held = self._hold()
            await held.__aenter__()
        except Exception as exc:  # a check or the server's lifespan failed: the ASGI server says so and stops
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._keeper)
                await send({"type": "lifespan.startup.complete"})
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
                self._on_shutdown()
                tg.cancel_scope.cancel()
        finally:
            self._tg = None
            await held.__aexit__(None, None, None)
        await send({"type": "lifespan.shutdown.complete"})

    async def task_group(self) -> TaskGroup:
        if self._tg is None:
            if self._hosted is None:
                self._hosted = anyio.Event()
                self._host_task = spawn_detached(self._host)
            await self._hosted.wait()
        assert self._tg is not None
        return self._tg

    async def _host(self) -> None:
        async with self._hold(), anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._keeper)
            assert self._hosted is not None
            self._hosted.set()
            await anyio.sleep_forever()

    async def aclose(self) -> None:
        """End the task group hosted without lifespan, if one was started."""
        task, self._host_task = self._host_task, None
        if task is not None:
            await task.aclose()
            self._tg, self._hosted = None, None
