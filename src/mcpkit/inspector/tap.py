"""A MessageStream that shows every JSON-RPC message crossing it to a callback, both ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..protocol.framing import Oversized
from ..runtime.stream import Deliver, Inbound, MessageStream, Outgoing, WrappedStream

__all__ = ["TappedStream"]


def _decoded(item: Any) -> Any:
    if isinstance(item, dict):
        return item
    if isinstance(item, bytes | bytearray):
        try:
            return orjson.loads(item)
        except orjson.JSONDecodeError:
            return {"unparsable": bytes(item[:2000]).decode("utf-8", "replace")}
    return None


class TappedStream(WrappedStream):
    """Wraps a client's stream: `seen("in" | "out", message)` for each message, before it goes on."""

    def __init__(self, inner: MessageStream, seen: Callable[[str, Any], None]) -> None:
        super().__init__(inner)
        self.seen = seen

    async def deliver_to(self, deliver: Deliver) -> None:
        async def tapped(inbound: Inbound) -> None:
            message = _decoded(inbound.data)
            if message is not None:
                self.seen("in", message)
            elif isinstance(inbound.data, Oversized):
                self.seen("in", {"oversized": True})
            await deliver(inbound)

        await self.inner.deliver_to(tapped)

    async def send(self, out: Outgoing) -> None:
        self.seen("out", out.decoded)
        await self.inner.send(out)
