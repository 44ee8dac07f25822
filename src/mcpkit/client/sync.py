"""The Client without async, for scripts and notebooks: the same calls, each waiting for its answer.

    from mcpkit.client.sync import connect_stdio

    with connect_stdio(["python", "server.py"]) as client:
        print(client.call_tool("add", {"a": 2, "b": 3}))

The async Client runs on an event loop in a background thread of its own, so this works where a loop is
already running in the calling thread (Jupyter, an async framework) and where none is. Handlers given as
options (sampling=, elicitation=, on_log=, on_progress=) run on that thread. Ctrl-C (or any exception) while
waiting cancels the request it interrupts, and is raised as usual.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Protocol, TypeVar, Unpack

import anyio
from anyio.from_thread import BlockingPortal

from ..protocol.jsonrpc import JSON, RequestId
from ..runtime.session import ProgressCallback
from .client import Client
from .options import HTTPOptions, StdioOptions
from .tasks import TaskHandle

__all__ = ["SyncClient", "SyncTaskHandle", "connect_http", "connect_stdio"]

T = TypeVar("T")


def start_portal() -> tuple[BlockingPortal, threading.Thread]:
    """An event loop on a daemon thread (an unclosed client never keeps the interpreter from exiting)."""
    handed: queue.Queue[BlockingPortal | BaseException] = queue.Queue(maxsize=1)

    async def run() -> None:
        async with BlockingPortal() as portal:
            handed.put(portal)
            await portal.sleep_until_stopped()

    def main() -> None:
        try:
            anyio.run(run)
        except BaseException as exc:  # the loop could not start: say so to the waiting caller
            handed.put(exc)

    thread = threading.Thread(target=main, name="mcpkit-sync-client", daemon=True)
    thread.start()
    portal = handed.get()
    if isinstance(portal, BaseException):
        raise portal
    return portal, thread


class SyncClient:
    """A connected Client whose methods block; close it (or use `with`) to disconnect.

    `client` is the async Client underneath, for what this class does not wrap."""

    def __init__(self, connect: AbstractAsyncContextManager[Client]) -> None:
        self._portal, self._thread = start_portal()
        self._connection: AbstractContextManager[Client] | None = None
        try:
            connection = self._portal.wrap_async_context_manager(connect)
            self.client = connection.__enter__()
            self._connection = connection
        except BaseException:
            self._stop()
            raise

    def _run(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        if self._connection is None:
            raise RuntimeError("this client is closed")

        async def call() -> T:
            return await fn(*args, **kwargs)

        future = self._portal.start_task_soon(call)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # cancels the task on the loop: an interrupted call is not left running
            raise

    def close(self) -> None:
        """Disconnect (a stdio server is shut down) and stop the background loop; closing twice is fine."""
        connection, self._connection = self._connection, None
        try:
            if connection is not None:
                connection.__exit__(None, None, None)
        finally:
            self._stop()

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._portal.call(self._portal.stop)
            self._thread.join()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- what the server said at connection ----------------------------------------------------

    @property
    def server_info(self) -> JSON:
        return self.client.server_info

    @property
    def server_capabilities(self) -> JSON:
        return self.client.server_capabilities

    @property
    def protocol(self) -> str:
        return self.client.protocol

    @property
    def instructions(self) -> str | None:
        return self.client.instructions

    # ---- the Client's calls, blocking ----------------------------------------------------------

    def request(
        self,
        method: str,
        params: JSON | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> JSON:
        return self._run(
            self.client.request, method, params, on_progress=on_progress, timeout=timeout, on_id=on_id
        )

    def ping(self) -> None:
        self._run(self.client.ping)

    def list_tools(self, cursor: str | None = None) -> JSON:
        return self._run(self.client.list_tools, cursor)

    def list_all_tools(self) -> list[JSON]:
        return self._run(self.client.list_all_tools)

    def call_tool(
        self,
        name: str,
        arguments: JSON | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> JSON:
        return self._run(self.client.call_tool, name, arguments, on_progress=on_progress, timeout=timeout)

    def call_tool_as_task(self, name: str, arguments: JSON | None = None) -> SyncTaskHandle:
        return SyncTaskHandle(self._run(self.client.call_tool_as_task, name, arguments), self._run)

    def list_resources(self, cursor: str | None = None) -> JSON:
        return self._run(self.client.list_resources, cursor)

    def list_all_resources(self) -> list[JSON]:
        return self._run(self.client.list_all_resources)

    def list_resource_templates(self, cursor: str | None = None) -> JSON:
        return self._run(self.client.list_resource_templates, cursor)

    def list_all_resource_templates(self) -> list[JSON]:
        return self._run(self.client.list_all_resource_templates)

    def read_resource(self, uri: str) -> JSON:
        return self._run(self.client.read_resource, uri)

    def subscribe(self, uri: str) -> None:
        self._run(self.client.subscribe, uri)

    def unsubscribe(self, uri: str) -> None:
        self._run(self.client.unsubscribe, uri)

    def list_prompts(self, cursor: str | None = None) -> JSON:
        return self._run(self.client.list_prompts, cursor)

    def list_all_prompts(self) -> list[JSON]:
        return self._run(self.client.list_all_prompts)

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> JSON:
        return self._run(self.client.get_prompt, name, arguments)

    def complete(self, ref: JSON, argument: str, value: str, context: dict[str, str] | None = None) -> JSON:
        return self._run(self.client.complete, ref, argument, value, context)

    def set_logging_level(self, level: str) -> None:
        self._run(self.client.set_logging_level, level)

    def roots_changed(self) -> None:
        self._run(self.client.roots_changed)


class _Runs(Protocol):
    def __call__(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T: ...


class SyncTaskHandle:
    """SyncClient.call_tool_as_task's task: `status`, `refresh()`, `result()` and `cancel()` as on the async
    TaskHandle (`handle`, underneath), each blocking."""

    def __init__(self, handle: TaskHandle, run: _Runs) -> None:
        self.handle = handle
        self._run = run

    @property
    def status(self) -> str:
        return self.handle.status

    def refresh(self) -> JSON:
        return self._run(self.handle.refresh)

    def cancel(self) -> None:
        self._run(self.handle.cancel)

    def result(self, on_status: Callable[[JSON], None] | None = None) -> JSON:
        return self._run(self.handle.result, on_status)


def connect_stdio(command: Sequence[str], **options: Unpack[StdioOptions]) -> SyncClient:
    """Spawn `command` as a stdio server and connect; the options are those of the async connect_stdio."""
    from .connect import connect_stdio as connect

    return SyncClient(connect(list(command), **options))


def connect_http(
    url: str, *, headers: dict[str, str] | None = None, **options: Unpack[HTTPOptions]
) -> SyncClient:
    """Connect to a Streamable HTTP server at `url`; the options are those of the async connect_http."""
    from .connect import connect_http as connect

    return SyncClient(connect(url, headers=headers, **options))
