"""subscriptions/listen (2026-07-28): a long-lived request whose stream carries change notifications.

Spec: patterns "Subscriptions". The server acknowledges first with the filter it agreed to honour,
then sends only the notification types the client asked for, each tagged with the subscription's
id (the listen request's JSON-RPC id). The subscription lasts until the client cancels the request
or the transport goes away.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import JSON, RequestId
from ..protocol.subscription_filter import FLAGS, SubscriptionFilter

if TYPE_CHECKING:  # the memory streams are imported when the first listener is made (~2 ms at start)
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from ..runtime.session import Session

__all__ = ["Listener", "agreed_filter"]

log = logging.getLogger("mcpkit")

_QUEUE = 256  # notifications buffered per listener before newer ones are dropped


@dataclass(eq=False)
class Listener:
    subscription_id: RequestId
    wanted: SubscriptionFilter
    send: MemoryObjectSendStream[tuple[str, JSON | None]]
    receive: MemoryObjectReceiveStream[tuple[str, JSON | None]] = field(repr=False)

    @classmethod
    def open(cls, subscription_id: RequestId, agreed: JSON) -> Listener:
        send, receive = anyio.create_memory_object_stream[tuple[str, JSON | None]](_QUEUE)
        return cls(subscription_id, SubscriptionFilter.of(agreed), send, receive)

    async def relay(self, session: Session, agreed: JSON) -> None:
        """Acknowledge with `agreed`, then forward what is offered, tagged with the subscription id,
        until the request is cancelled or the session ends."""
        rid, connection = self.subscription_id, session.connection
        ack = connection.subscription_notification(
            "notifications/subscriptions/acknowledged", {"notifications": agreed}, rid
        )
        try:
            await session.send_message(ack, rid)
            async for method, params in self.receive:
                note = connection.subscription_notification(method, params, rid)
                await session.send_message(note, rid)
        finally:
            self.send.close()
            self.receive.close()

    def offer(self, method: str, params: JSON | None = None) -> None:
        """Queue a notification if this subscription asked for it; never blocks the caller."""
        if not self.wanted.wants(method, params):
            return
        try:
            self.send.send_nowait((method, params))
        except anyio.WouldBlock:
            log.warning("subscription %r is not keeping up; a %s was dropped", self.subscription_id, method)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


def agreed_filter(requested: object, server_caps: JSON) -> JSON:
    """The subset of the client's filter this server honours (what the acknowledgment echoes)."""
    if not isinstance(requested, dict):
        raise InvalidParams("Invalid params: subscriptions/listen needs a notifications object")
    agreed: JSON = {}
    for flag, (_method, path) in FLAGS.items():
        section = server_caps.get(path[0])
        if requested.get(flag) is True and isinstance(section, dict) and section.get(path[1]):
            agreed[flag] = True
    uris = requested.get("resourceSubscriptions")
    resources = server_caps.get("resources")
    if isinstance(uris, list) and isinstance(resources, dict) and resources.get("subscribe"):
        agreed["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    return agreed
