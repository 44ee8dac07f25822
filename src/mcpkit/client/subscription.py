"""The client's view of a subscription: change notifications the caller asked for, as an async iterator.

On a 2026-07-28 server it is one subscriptions/listen request (patterns "Subscriptions"); on a
handshake session the same notifications arrive on the session and resources/subscribe is used,
so code written against `Client.listen` works in both eras.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import anyio

from ..protocol.subscription_filter import SubscriptionFilter

__all__ = ["Subscription", "listen_filter"]

JSON = dict[str, Any]


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
