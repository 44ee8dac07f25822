"""The group without async: `with open_group("mcp.json") as group: group.call_tool("s.tool", {...})`.

As mcpkit.client.sync: the group runs on an event loop in a background thread; each call waits for its
answer, and an exception (Ctrl-C) while waiting cancels the call it interrupts.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from ...protocol.jsonrpc import JSON
from ..sync import start_portal
from .group import ClientGroup

__all__ = ["SyncClientGroup", "open_group"]

T = TypeVar("T")


class SyncClientGroup:
    """A started ClientGroup whose methods block; close it (or use `with`) to stop every server.

    `group` is the async ClientGroup underneath."""

    def __init__(self, group: ClientGroup) -> None:
        self._portal, self._thread = start_portal()
        self._entered: AbstractContextManager[ClientGroup] | None = None
        try:
            entered = self._portal.wrap_async_context_manager(group)
            self.group = entered.__enter__()
            self._entered = entered
        except BaseException:
            self._stop()
            raise

    def _run(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        if self._entered is None:
            raise RuntimeError("this group is closed")

        async def call() -> T:
            return await fn(*args, **kwargs)

        future = self._portal.start_task_soon(call)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def _read(self, fn: Callable[..., T], *args: Any) -> T:
        """A catalog read, on the loop's thread (where the catalog changes)."""
        if self._entered is None:
            raise RuntimeError("this group is closed")
        return self._portal.call(fn, *args)

    def close(self) -> None:
        entered, self._entered = self._entered, None
        try:
            if entered is not None:
                entered.__exit__(None, None, None)
        finally:
            self._stop()

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._portal.call(self._portal.stop)
            self._thread.join()

    def __enter__(self) -> SyncClientGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status(self) -> dict[str, JSON]:
        return self._read(self.group.status)

    def tools(self) -> list[JSON]:
        return self._read(self.group.tools)

    def prompts(self) -> list[JSON]:
        return self._read(self.group.prompts)

    def resources(self) -> list[JSON]:
        return self._read(self.group.resources)

    def resource_templates(self) -> list[JSON]:
        return self._read(self.group.resource_templates)

    def search(self, query: str, limit: int = 5) -> list[JSON]:
        return self._read(self.group.search, query, limit)

    def call_tool(self, name: str, arguments: JSON | None = None, **options: Any) -> JSON:
        return self._run(self.group.call_tool, name, arguments, **options)

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> JSON:
        return self._run(self.group.get_prompt, name, arguments)

    def read_resource(self, uri: str, server: str | None = None) -> JSON:
        return self._run(self.group.read_resource, uri, server)

    def subscribe(self, uri: str, server: str | None = None) -> None:
        self._run(self.group.subscribe, uri, server)

    def unsubscribe(self, uri: str, server: str | None = None) -> None:
        self._run(self.group.unsubscribe, uri, server)

    def complete(self, ref: JSON, argument: str, value: str, context: dict[str, str] | None = None) -> JSON:
        return self._run(self.group.complete, ref, argument, value, context)

    def ping(self, server: str) -> None:
        self._run(self.group.ping, server)


def open_group(config: Mapping[str, Any] | str | os.PathLike[str], **options: Any) -> SyncClientGroup:
    """Start the servers of an `mcpServers` config (a path or parsed JSON); options as ClientGroup's."""
    return SyncClientGroup(ClientGroup.from_config(config, **options))
