"""Client.listen: change notifications in either era (see subscription.py for the iterator itself)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from ..protocol import events as ev
from ..protocol.modern import SUBSCRIPTION_ID
from ..runtime.groups import CallerCancellation
from ..runtime.session import Session
from .subscription import Subscription, listen_filter
from .tasks import DECLARE_TASKS

__all__ = ["Listening"]

JSON = dict[str, Any]


class Listening:
    """The part of Client that opens subscriptions and routes their notifications."""

    session: Session
    timeout: float | None
    _subscriptions: dict[Any, Subscription]
    _output_validators: dict[str, Any]

    @property
    def stateless(self) -> bool:
        raise NotImplementedError

    async def subscribe(self, uri: str) -> None:
        raise NotImplementedError

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: list[str] | None = None,
        tasks: list[str] | None = None,
    ) -> AsyncIterator[Subscription]:
        """Change notifications as an async iterator of (method, params), in either era.

        Stateless era: one subscriptions/listen request, cancelled on exit. Handshake era: the
        session's own notifications, with resources/subscribe for `uris`. `tasks`: ids whose status
        notifications to hear (notifications/tasks, the extension declared; notifications/tasks/status).
        """
        subscription = Subscription(listen_filter(tools, prompts, resources, uris or [], tasks))
        if not self.stateless:
            for uri in uris or []:
                await self.subscribe(uri)
            subscription.acknowledge(subscription.requested)
            self._subscriptions[id(subscription)] = subscription
            try:
                yield subscription
            finally:
                del self._subscriptions[id(subscription)]
                subscription.close()
            return
        params: JSON = {"notifications": subscription.requested}
        if tasks:
            params["_meta"] = DECLARE_TASKS
        rid, message = self.session.connection.send_request("subscriptions/listen", params)
        self._subscriptions[rid] = subscription
        cancelled = CallerCancellation()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._hold, rid, message, subscription)
                with anyio.fail_after(self.timeout):
                    await subscription.ready.wait()
                with cancelled.noting():
                    yield subscription
                tg.cancel_scope.cancel()
            cancelled.reraise()
        finally:
            del self._subscriptions[rid]
            subscription.close()

    async def _hold(self, rid: Any, message: JSON, subscription: Subscription) -> None:
        try:
            await self.session.send_built(rid, message)
        finally:
            subscription.close()  # the server ended it (graceful closure) or the stream went away

    def _route_to_subscription(self, note: ev.NotificationReceived) -> bool:
        """A notification tagged with a subscription id belongs to that listen() only."""
        meta = note.params.get("_meta")
        sid = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if sid is None:
            for sub in self._subscriptions.values():
                sub.offer(note.method, note.params)  # handshake-era listeners see session notifications
            return False
        subscription = self._subscriptions.get(sid)
        if subscription is not None:
            if note.method == "notifications/subscriptions/acknowledged":
                agreed = note.params.get("notifications")
                subscription.acknowledge(agreed if isinstance(agreed, dict) else {})
            else:
                if note.method == "notifications/tools/list_changed":
                    self._output_validators.clear()
                subscription.offer(note.method, note.params)
        return True
