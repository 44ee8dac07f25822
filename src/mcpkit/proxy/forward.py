"""Proxy: a Server whose requests are answered by a remote MCP server through a Client, and the
Client's handlers that carry the remote's own requests and notifications back to the proxy's clients.

Front (the proxy's clients) to back (the remote): every list, call, read, prompt, completion and task
request is sent on as is (its `progressToken` replaced by the proxy's, the remote's progress sent back);
a cancelled front request cancels the remote one (the Client sends notifications/cancelled).

Back to front: sampling/createMessage, elicitation/create and roots/list go to the client whose request
is in flight on the remote, as a request related to it (stdio and most remotes name no request a
server-initiated request belongs to; with several in flight, the latest tools/call asks). The remote's
list changes, resource updates and log messages go to every front client (each filtered by its level).

Limits: a front client of the 2026-07-28 era gets an input-required round for each server-initiated
request, which would re-run the remote call: the proxy refuses those requests for it (the remote sees
an error). Resource subscriptions to a remote of the 2026-07-28 era are not forwarded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio

from ..client.client import Client
from ..protocol.errors import INVALID_REQUEST, MCPError
from ..server.context import Context
from ..server.registry import LIST_CHANGED
from ..server.server import Server

__all__ = ["FORWARDED", "Proxy"]

JSON = dict[str, Any]
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
        self._in_flight: dict[int, tuple[str, Context]] = {}  # insertion order: the latest last
        self._next = 0

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
        """`server(client)`, with the remote's list changes relayed while the block runs."""
        server = await self.server(client, name=name)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.relay_changes)
            try:
                yield server
            finally:
                tg.cancel_scope.cancel()

    async def server(self, client: Client, *, name: str | None = None) -> Server:
        """The front Server for a connected `client`: the remote's identity and capabilities. For a
        2026-07-28 remote, `relay_changes` must run for its list changes to reach the front."""
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
        self._next += 1
        key = self._next
        self._in_flight[key] = (method, ctx)
        try:
            wants_progress = isinstance(params.get("_meta"), dict) and "progressToken" in params["_meta"]
            result = await self.client.request(
                method,
                outgoing(params),
                on_progress=ctx.report_progress if wants_progress else None,
                timeout=self.timeout,
            )
        finally:
            del self._in_flight[key]
        if method == "resources/subscribe" and isinstance(params.get("uri"), str):
            await self.front.peers.subscribe(ctx.session, params["uri"])
        return result

    async def _subscribe_remote(self, uris: list[str]) -> None:
        assert self.client is not None
        if not self.client.stateless:
            for uri in uris:
                await self.client.subscribe(uri)

    async def _roots_changed(self, _session: Any) -> None:
        assert self.client is not None
        await self.client.roots_changed()

    # ---- back to front -----------------------------------------------------------------------

    def _asking(self, method: str) -> Context:
        """The front request a server-initiated request of the remote belongs to (see the module doc)."""
        flight = list(self._in_flight.values())
        calls = [ctx for m, ctx in flight if m == "tools/call"]
        chosen = calls[-1] if calls else flight[-1][1] if flight else None
        if chosen is None:
            raise MCPError(INVALID_REQUEST, f"{method}: no client request is in flight through the proxy")
        if chosen.stateless:
            raise MCPError(INVALID_REQUEST, f"{method}: the proxy's client asks statelessly (2026-07-28)")
        return chosen

    async def _ask(self, method: str, params: JSON) -> JSON:
        result: JSON = await self._asking(method).asker.ask(method, params)
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
