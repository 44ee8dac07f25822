"""The client's view of a subscription: change notifications the caller asked for, as an async iterator.

On a 2026-07-28 server it is one subscriptions/listen request (patterns "Subscriptions"); on a
handshake session the same notifications arrive on the session and resources/subscribe is used,
so code written against `Client.listen` works in both eras. A Client owns one `Subscriptions`: the
subscriptions open on it, and which of them each notification goes to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio

from ..protocol import events as ev
from ..protocol.jsonrpc import JSON
from ..protocol.stateless import SUBSCRIPTION_ID
from ..protocol.subscription_filter import SubscriptionFilter
from ..runtime.groups import CallerCancellation
from ..runtime.session import Session
from .tasks import DECLARE_TASKS

__all__ = ["Subscription", "Subscriptions", "listen_filter"]


def listen_filter(
    tools: bool, prompts: bool, resources: bool, uris: list[str], task_ids: list[str] | None = None
) -> JSON:
    flags = {"toolsListChanged": tools, "promptsListChanged": prompts, "resourcesListChanged": resources}
    out: JSON = {k: True for k, v in flags.items() if v}
    if uris:
        out["resourceSubscriptions"] = list(uris)
    if task_ids:
        out["taskIds"] = list(task_ids)
    return out


class Subscription:
    """Iterate to get `(method, params)` for each notification; `acknowledged` is what the server
    agreed to send (on a handshake session: what was asked)."""

    def __init__(self, requested: JSON, buffer: int = 256) -> None:
        self.requested = requested
        self.acknowledged: JSON | None = None
        self.ready = anyio.Event()
        self._wanted = SubscriptionFilter.of(requested)
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, JSON]](buffer)

    def acknowledge(self, agreed: JSON) -> None:
        self.acknowledged = agreed
        self.ready.set()

    def offer(self, method: str, params: JSON) -> None:
        """Queue a notification if it is one this subscription asked for (dropped if the reader lags)."""
        if self._wanted.wants(method, params):
            with suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._send.send_nowait((method, params))

    def close(self) -> None:
        self._send.close()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, JSON]:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


class Subscriptions:
    """The subscriptions open on one session, and the routing of its notifications to them.

    Stateless era: each is a subscriptions/listen request, known by its id, which the server names in
    the `_meta` of every notification it sends for it. Handshake era: each hears the session's own
    notifications.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self._open: dict[Any, Subscription] = {}

    @asynccontextmanager
    async def kept(self, subscription: Subscription) -> AsyncIterator[None]:
        """Handshake era: `subscription` hears the session's notifications until exit; what it asked for
        is what it was agreed."""
        subscription.acknowledge(subscription.requested)
        self._open[id(subscription)] = subscription
        try:
            yield
        finally:
            del self._open[id(subscription)]
            subscription.close()

    @asynccontextmanager
    async def requested(
        self, subscription: Subscription, timeout: float | None, declare_tasks: bool = False
    ) -> AsyncIterator[None]:
        """Stateless era: one subscriptions/listen request, entered once the server acknowledged it
        (TimeoutError after `timeout` seconds), cancelled on exit. `declare_tasks`: the request declares
        the tasks extension (task status notifications)."""
        params: JSON = {"notifications": subscription.requested}
        if declare_tasks:
            params["_meta"] = DECLARE_TASKS
        rid, message = self.session.connection.send_request("subscriptions/listen", params)
        self._open[rid] = subscription
        cancelled = CallerCancellation()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._hold, rid, message, subscription)
                with anyio.fail_after(timeout):
                    await subscription.ready.wait()
                with cancelled.noting():
                    yield
                tg.cancel_scope.cancel()
            cancelled.reraise()
        finally:
            del self._open[rid]
            subscription.close()

    async def _hold(self, rid: Any, message: JSON, subscription: Subscription) -> None:
        try:
            await self.session.send_built(rid, message)
        finally:
            subscription.close()  # the server ended it (graceful closure) or the stream went away

    def route(self, note: ev.NotificationReceived) -> bool:
        """Offer `note` to the subscriptions it is for; True when it belongs to a subscriptions/listen
        request only (tagged with its id), False when the session's other listeners hear it too."""
        meta = note.params.get("_meta")
        sid = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if sid is None:
            for sub in self._open.values():
                sub.offer(note.method, note.params)  # handshake-era subscriptions hear session notifications
            return False
        subscription = self._open.get(sid)
        if subscription is None:
            return True
        if note.method == "notifications/subscriptions/acknowledged":
            agreed = note.params.get("notifications")
            subscription.acknowledge(agreed if isinstance(agreed, dict) else {})
        else:
            subscription.offer(note.method, note.params)
        return True
