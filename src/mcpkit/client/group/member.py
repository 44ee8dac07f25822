"""One server of a group, kept connected: started, listed, watched for list changes, and reconnected with
backoff when it fails to start or goes away."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from enum import StrEnum
from typing import TypeVar

import anyio

from ...protocol.errors import CONNECTION_CLOSED, MCPError
from ...protocol.jsonrpc import JSON
from ...transports.http_client.backoff import Backoff
from ..client import Client
from ..connect import connect_http, connect_stdio
from ..handlers import maybe_await
from .config import HttpServer, ServerSpec

__all__ = ["Member", "ServerUnavailable", "State"]

T = TypeVar("T")
# Options of one transport's connect function, given to a whole group: each server takes its own.
_STDIO_ONLY = frozenset({"stderr", "max_line", "shutdown_timeout", "start_new_session"})
_HTTP_ONLY = frozenset(
    {"auth", "max_message", "reconnect_attempts", "reconnect_on_404", "retry_ms", "legacy_fallback"}
)
_LIST_CHANGED = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/prompts/list_changed": ("prompts",),
    "notifications/resources/list_changed": ("resources", "resourceTemplates"),
}


def _described(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]  # a task group's wrapping says nothing
    return f"{type(error).__name__}: {error}"


def _never_sent(error: BaseException) -> bool:
    """A refused connection: the request reached no server (the HTTP client's wording, failures.py)."""
    return isinstance(error, MCPError) and error.message.startswith("cannot connect to ")


class State(StrEnum):
    STARTING = "starting"
    READY = "ready"
    DOWN = "down"  # failed to start or went away; retried with backoff


class ServerUnavailable(MCPError):
    """The server is not connected (it failed to start, or is reconnecting), or it went away while a
    call that may have run was in flight (such a call is never retried)."""

    def __init__(self, message: str) -> None:
        super().__init__(CONNECTION_CLOSED, message)


class Member:
    """A named server's connection, supervised by `run()` until cancelled."""

    def __init__(
        self,
        name: str,
        spec: ServerSpec,
        options: JSON,
        *,
        backoff: Backoff,
        connect_timeout: float,
        on_change: Callable[[str], None],
        ping_interval: float | None = None,
    ) -> None:
        self.name = name
        self.spec = spec
        self.options = options
        self.backoff = backoff
        self.connect_timeout = connect_timeout
        self.on_change = on_change
        self.ping_interval = ping_interval
        self.client: Client | None = None
        self.state = State.STARTING
        self.error: BaseException | None = None
        self.failures = 0
        self._was_up = False
        self.lists: dict[str, list[JSON]] = {}
        self.subscriptions: set[str] = set()
        self.settled = anyio.Event()  # the first attempt ended, either way
        self._ready = anyio.Event()
        self._lost = anyio.Event()
        self._dirty: set[str] = set()
        self._changed = anyio.Event()
        self._relisten = anyio.Event()
        self._listening = anyio.Event()

    def status(self) -> JSON:
        """What a user is told about this server: state, tool count, last error, failed attempts."""
        error = _described(self.error) if self.error is not None else None
        return {
            "state": self.state.value,
            "tools": len(self.lists.get("tools", [])),
            "error": error,
            "failures": self.failures,
        }

    async def run(self) -> None:
        while True:
            self._was_up = False
            try:
                await self._connected_session()
            except Exception as exc:  # any failure to start or to stay up is reported, then retried
                self.error = exc
            self._down()
            self.failures = 0 if self._was_up else self.failures + 1  # was up: come back at once
            await anyio.sleep(self.backoff.delay(0, self.failures))

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Client]:
        http = isinstance(self.spec, HttpServer)
        foreign = _STDIO_ONLY if http else _HTTP_ONLY
        options = {k: v for k, v in self.options.items() if k not in foreign} | {
            "on_notification": self._heard
        }
        if isinstance(self.spec, HttpServer):
            async with connect_http(self.spec.url, headers=dict(self.spec.headers), **options) as client:
                yield client
            return
        env = {**os.environ, **self.spec.env}  # as Claude Desktop: the config's env on top of ours
        async with connect_stdio(self.spec.argv, env=env, cwd=self.spec.cwd, **options) as client:
            yield client

    async def _connected_session(self) -> None:
        """Connect, list, and stay ready until the connection is lost."""
        with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
            async with self._connect() as client, anyio.create_task_group() as tg:
                await self._load(client, ("tools", "prompts", "resources", "resourceTemplates"))
                tg.start_soon(self._refresh_on_change, client)
                if client.stateless:
                    self._listening = anyio.Event()
                    tg.start_soon(self._listen, client)
                    await self._listening.wait()
                for uri in [] if client.stateless else sorted(self.subscriptions):  # renewed on reconnect
                    await client.subscribe(uri)
                scope.deadline = math.inf
                self.client = client
                self.state = State.READY
                self.error = None
                self._was_up = True
                self._lost = anyio.Event()
                self._ready.set()
                self.settled.set()
                self.on_change(self.name)
                if self.ping_interval:
                    tg.start_soon(self._watch_health, client, self.ping_interval)
                await self._until_lost(client)
                self._mark_lost(client)
                tg.cancel_scope.cancel()
        if scope.cancelled_caught:
            raise TimeoutError(f"no answer within {self.connect_timeout:g}s")

    def _down(self) -> None:
        self.client = None
        self.state = State.DOWN
        self.lists = {}
        if self._ready.is_set():
            self._ready = anyio.Event()
        self.settled.set()
        self.on_change(self.name)

    async def _until_lost(self, client: Client) -> None:
        async with anyio.create_task_group() as tg:

            async def wait(event: Callable[[], Awaitable[None]]) -> None:
                await event()
                tg.cancel_scope.cancel()

            tg.start_soon(wait, client.session.closed.wait)
            tg.start_soon(wait, self._lost.wait)

    async def _load(self, client: Client, keys: tuple[str, ...]) -> None:
        caps = client.server_capabilities
        fetch = {
            "tools": client.list_all_tools,
            "prompts": client.list_all_prompts,
            "resources": client.list_all_resources,
            "resourceTemplates": client.list_all_resource_templates,
        }
        for key in keys:
            if ("resources" if key == "resourceTemplates" else key) not in caps:
                continue
            try:
                self.lists[key] = await fetch[key]()
            except MCPError:
                if key != "resourceTemplates":  # optional: some servers have resources, no templates
                    raise

    async def _heard(self, method: str, params: JSON) -> None:
        keys = _LIST_CHANGED.get(method)
        if keys is not None:
            self._dirty.update(keys)
            self._changed.set()
        user = self.options.get("on_notification")
        if user is not None:
            await maybe_await(user(method, params))

    async def _watch_health(self, client: Client, interval: float) -> None:
        """A server that stops answering pings is down, found without waiting for the next call."""
        while True:
            await anyio.sleep(interval)
            if await self._lost_after(client):
                return

    async def _listen(self, client: Client) -> None:
        """2026-07-28: list changes and resource updates come only on a subscriptions/listen stream; it
        is reopened whenever the subscribed URIs change."""
        while True:
            self._relisten = anyio.Event()
            ended = False
            async with anyio.create_task_group() as tg:

                async def follow() -> None:
                    nonlocal ended
                    try:
                        uris = sorted(self.subscriptions)
                        async with client.listen(
                            tools=True, prompts=True, resources=True, uris=uris
                        ) as changes:
                            self._listening.set()
                            async for method, params in changes:
                                await self._heard(method, params)
                    except* (MCPError, TimeoutError):
                        pass  # a server that cannot be listened to: its lists are read once per connection
                    ended = True
                    self._listening.set()
                    tg.cancel_scope.cancel()

                tg.start_soon(follow)
                await self._relisten.wait()
                tg.cancel_scope.cancel()
            if ended:
                return

    async def subscribe(self, uri: str, wait: float) -> None:
        """Hear notifications/resources/updated for `uri`, on this connection and every later one."""
        client = await self.ready(wait)
        self.subscriptions.add(uri)
        try:
            if client.stateless:
                self._listening = anyio.Event()
                self._relisten.set()
                with anyio.fail_after(wait):
                    await self._listening.wait()
            else:
                await self.use(lambda c: c.subscribe(uri), retry=True, wait=wait)
        except BaseException:
            self.subscriptions.discard(uri)
            raise

    async def unsubscribe(self, uri: str, wait: float) -> None:
        self.subscriptions.discard(uri)
        client = await self.ready(wait)
        if client.stateless:
            self._relisten.set()
        else:
            await self.use(lambda c: c.unsubscribe(uri), retry=True, wait=wait)

    async def _refresh_on_change(self, client: Client) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            keys, self._dirty = tuple(sorted(self._dirty)), set()
            await self._load(client, keys)
            self.on_change(self.name)

    async def ready(self, wait: float) -> Client:
        """The connected client, waiting up to `wait` seconds for one; ServerUnavailable otherwise."""
        if self.client is None and wait > 0:
            with anyio.move_on_after(wait):
                await self._ready.wait()
        if self.client is None:
            why = f": {_described(self.error)}" if self.error is not None else ""
            raise ServerUnavailable(f"server {self.name!r} is {self.state.value}{why}")
        return self.client

    async def use(self, call: Callable[[Client], Awaitable[T]], *, retry: bool, wait: float) -> T:
        """`call` on the connected client. When the connection turns out lost, the server is
        reconnected and `call` is made once more if `retry` (a request that changes nothing) or if
        it never reached the server (the connection was refused)."""
        client = await self.ready(wait)
        try:
            return await call(client)
        except (MCPError, OSError) as exc:
            if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
                raise
            if not await self._lost_after(client):
                raise
            if not retry and not _never_sent(exc):
                raise ServerUnavailable(
                    f"server {self.name!r} went away during the call; it may have run, so it is not retried"
                ) from exc
        return await call(await self.ready(wait))

    async def _lost_after(self, client: Client) -> bool:
        """Whether `client`'s connection is gone (a ping settles it); if so, reconnecting starts."""
        alive = not client.session.closed.is_set()
        if alive:
            with anyio.move_on_after(min(5.0, self.connect_timeout)):
                try:
                    await client.ping()
                    return False
                except (MCPError, OSError):
                    pass
        self._mark_lost(client)
        return True

    def _mark_lost(self, client: Client) -> None:
        """From now on calls wait for the next connection; run() tears this one down."""
        if self.client is client:
            self.client, self.state = None, State.DOWN
            self.error = ConnectionError("the connection was lost")
            if self._ready.is_set():
                self._ready = anyio.Event()
            self._lost.set()
