"""Proxy: a Server whose requests are answered by a remote MCP server through a Client, and the
Client's handlers that carry the remote's own requests and notifications back to the proxy's clients.

Front (the proxy's clients) to back (the remote): every list, call, read, prompt, completion and task
request is sent on as is (its `progressToken` replaced by the proxy's, the remote's progress sent back);
a cancelled front request cancels the remote one (the Client sends notifications/cancelled).

Back to front: sampling/createMessage, elicitation/create and roots/list go to the client whose request
they belong to, as a request related to it, or are refused where that cannot be told (routing.py). The
remote's list changes, resource updates and log messages go to every front client (each filtered by
its level).

A front client of the 2026-07-28 era is asked with input-required rounds while the remote call waits
in this process (parked.py), so it is not run again. Resource subscriptions to a remote of the
2026-07-28 era are not forwarded.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import anyio.abc

from ..client.client import Client
from ..protocol.errors import InvalidRequest
from ..protocol.jsonrpc import JSON
from ..protocol.methods import ASKS_CLIENT, CACHEABLE
from ..protocol.versions import is_stateless
from ..server.context import Context
from ..server.registry import LIST_CHANGED
from ..server.server import Server
from .parked import Parked, parked_id
from .routing import Flight, Flights

__all__ = ["FORWARDED", "Proxy"]

Call = Callable[[JSON], Awaitable[JSON]]

FORWARDED: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "tasks/update",
    }
)
_CACHEABLE: Final = FORWARDED & CACHEABLE  # server/discover is the proxy's own, never forwarded
_OFFERED: Final = ("tools", "resources", "prompts", "completions", "tasks")
_CHANGES: Final = frozenset(LIST_CHANGED.values())
# Params of a front request that belong to its hop, not to the remote: the stateless era's round trip.
_HOP_PARAMS: Final = ("requestState", "inputResponses")
_PROTOCOL_META: Final = "io.modelcontextprotocol/"


def outgoing(params: JSON) -> JSON:
    """A front request's params as the remote gets them: no progress token, no hop-only fields."""
    out = {k: v for k, v in params.items() if k not in _HOP_PARAMS and k != "_meta"}
    meta = params.get("_meta")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k != "progressToken" and not k.startswith(_PROTOCOL_META)}
        if kept:
            out["_meta"] = kept
    return out


class Proxy:
    """Joins one remote (a Client) to one front Server. Build the Client with `client_options()`,
    then `server(client)` is the Server to serve."""

    def __init__(self, *, timeout: float | None = 300.0) -> None:
        """`timeout`: how long a forwarded request may wait for the remote without progress."""
        self.timeout = timeout
        self.client: Client | None = None
        self.front: Server | None = None
        self.flights = Flights()
        self._parked: dict[str, Parked] = {}
        self._tg: anyio.abc.TaskGroup | None = None  # where parked calls run (while `serving`)

    def client_options(self) -> JSON:
        """The Client options that bring the remote's requests and notifications to the proxy."""
        return {
            "sampling": self._sampling,
            "sampling_tools": True,
            "elicitation": self._elicitation,
            "elicitation_url": True,
            "roots": self._roots,
            "on_notification": self._on_notification,
        }

    @asynccontextmanager
    async def serving(self, client: Client, *, name: str | None = None) -> AsyncIterator[Server]:
        """`server(client)`, with the remote's list changes relayed and 2026-07-28 clients' calls parked
        (parked.py) while the block runs."""
        server = await self.server(client, name=name)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.relay_changes)
            self._tg = tg
            try:
                yield server
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    async def server(self, client: Client, *, name: str | None = None) -> Server:
        """The front Server for a connected `client`: the remote's identity and capabilities. Without
        `serving`, a 2026-07-28 remote's list changes are not relayed and 2026-07-28 clients are not
        asked (the remote's requests for them fail)."""
        remote = client.server_info
        server = Server(
            name or str(remote.get("name", "proxy")),
            str(remote.get("version", "0.1.0")),
            instructions=client.instructions,
            page_size=None,
        )
        caps = client.server_capabilities
        server.registry.declared = {k: caps[k] for k in _OFFERED if isinstance(caps.get(k), dict)}
        if client.stateless and "resources" in server.registry.declared:
            server.registry.declared["resources"] = {**caps["resources"], "subscribe": False}
        server.middleware.add(self._forward)
        server.on_roots_changed(self._roots_changed)
        self.client, self.front = client, server
        if "logging" in caps:  # every level comes; each front session filters by its own
            await client.set_logging_level("debug")
        return server

    # ---- front to back -----------------------------------------------------------------------

    async def _forward(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        if method == "subscriptions/listen":
            await self._subscribe_remote(_listened_uris(params))
            return await call_next(params)
        if method == "resources/unsubscribe":
            return await call_next(params)  # others may still listen: the remote keeps sending
        if method not in FORWARDED:
            return await call_next(params)  # server/discover, answered with the declared capabilities
        assert self.client is not None and self.front is not None
        if ctx.stateless and method in ASKS_CLIENT and self._tg is not None:
            return self._for_front(ctx, method, await self._round(ctx, method, params))
        wants_progress = isinstance(params.get("_meta"), dict) and "progressToken" in params["_meta"]
        with self.flights.flying(method, ctx) as flight:
            result = await self.client.request(
                method,
                outgoing(params),
                on_progress=ctx.report_progress if wants_progress else None,
                timeout=self.timeout,
                on_id=functools.partial(self.flights.sent, flight),
            )
        if method == "resources/subscribe" and isinstance(params.get("uri"), str):
            await self.front.peers.subscribe(ctx.session, params["uri"])
        return self._for_front(ctx, method, result)

    def _for_front(self, ctx: Context, method: str, result: JSON) -> JSON:
        """A 2026-07-28 client's cacheable results carry ttlMs and cacheScope: the proxy's hint where
        the remote (of the handshake era) gave none."""
        if method in _CACHEABLE and is_stateless(ctx.negotiated.version) and self.front is not None:
            return {**self.front.registry.cache.fields(), **result}
        return result

    async def _round(self, ctx: Context, method: str, params: JSON) -> JSON:
        """One round of a stateless client's request whose remote call may ask it (parked.py)."""
        assert self.client is not None and self._tg is not None
        sent = outgoing(params)
        ident = parked_id(ctx.asker.answers)
        parked = self._parked.get(ident) if ident is not None else None
        if ident is not None and parked is None:
            raise InvalidRequest("the proxied call these answers are for has ended")
        if parked is None:
            parked = self._park(self.client, method, sent)
        return await parked.round(ctx, sent)

    def _park(self, client: Client, method: str, sent: JSON) -> Parked:
        def ended() -> None:
            self._parked.pop(parked.ident, None)
            self.flights.end(flight)

        async def progress(value: float, total: float | None, message: str | None) -> None:
            if parked.ctx is not None:
                await parked.ctx.report_progress(value, total, message)

        async def call() -> JSON:
            with self.flights.current(flight):
                on_id = functools.partial(self.flights.sent, flight)
                return await client.request(
                    method, sent, on_progress=progress, timeout=self.timeout, on_id=on_id
                )

        parked = Parked(method, sent, timeout=self.timeout, on_end=ended)
        self._parked[parked.ident] = parked
        flight: Flight = self.flights.start(method, parked)
        assert self._tg is not None
        self._tg.start_soon(parked.run, call)
        return parked

    async def _subscribe_remote(self, uris: list[str]) -> None:
        assert self.client is not None
        if not self.client.stateless:
            for uri in uris:
                await self.client.subscribe(uri)

    async def _roots_changed(self, _session: Any) -> None:
        assert self.client is not None
        await self.client.roots_changed()

    # ---- back to front -----------------------------------------------------------------------

    def _asking(self, method: str) -> Context | Parked:
        """The front request a server-initiated request of the remote belongs to (routing.py)."""
        chosen = self.flights.asking(method).target
        if isinstance(chosen, Context) and chosen.stateless:
            raise InvalidRequest(f"{method}: the proxy's client cannot be asked in this request")
        return chosen

    async def _ask(self, method: str, params: JSON) -> JSON:
        target = self._asking(method)
        result: JSON = await (target.ask if isinstance(target, Parked) else target.asker.ask)(method, params)
        return result

    async def _sampling(self, params: JSON) -> JSON:
        return await self._ask("sampling/createMessage", params)

    async def _elicitation(self, params: JSON) -> JSON:
        return await self._ask("elicitation/create", params)

    async def _roots(self) -> list[JSON]:
        roots = (await self._ask("roots/list", {})).get("roots")
        return roots if isinstance(roots, list) else []

    async def _on_notification(self, method: str, params: JSON) -> None:
        front = self.front
        if front is None:
            return
        if method in _CHANGES:
            front.peers.changed(method)
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            await front.peers.resource_updated(params["uri"])
        elif method == "notifications/message":
            level = params.get("level")
            await front.log(
                level if isinstance(level, str) else "info", params.get("data"), params.get("logger")
            )

    async def relay_changes(self) -> None:
        """Hold a subscriptions/listen on a 2026-07-28 remote for its list changes (the handshake
        era sends them unasked); returns at once for a handshake-era remote."""
        assert self.client is not None
        if not self.client.stateless:
            return
        async with self.client.listen(tools=True, prompts=True, resources=True) as changes:
            async for method, params in changes:
                await self._on_notification(method, params)
        await anyio.sleep_forever()


def _listened_uris(params: JSON) -> list[str]:
    wanted = params.get("notifications")
    uris = wanted.get("resourceSubscriptions") if isinstance(wanted, dict) else None
    return [u for u in uris if isinstance(u, str)] if isinstance(uris, list) else []
