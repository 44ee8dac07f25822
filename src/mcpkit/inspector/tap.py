"""A MessageStream that shows every JSON-RPC message crossing it to a callback, both ways."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..protocol.framing import Oversized
from ..runtime.stream import MessageStream, Outgoing, Processed

__all__ = ["TappedStream"]

JSON = dict[str, Any]


def _decoded(item: Any) -> Any:
    if isinstance(item, dict):
        return item
    if isinstance(item, bytes | bytearray):
        try:
            return orjson.loads(item)
        except orjson.JSONDecodeError:
            return {"unparsable": bytes(item[:2000]).decode("utf-8", "replace")}
    return None


class TappedStream:
    """Wraps a client's stream: `seen("in" | "out", message)` for each message, before it goes on."""

    def __init__(self, inner: MessageStream, seen: Callable[[str, Any], None]) -> None:
        self.inner, self.seen = inner, seen

    async def receive(self) -> bytes | bytearray | JSON | Oversized | Processed:
        item = await self.inner.receive()
        message = _decoded(item)
        if message is not None:
            self.seen("in", message)
        elif isinstance(item, Oversized):
            self.seen("in", {"oversized": True})
        return item

    async def send(self, out: Outgoing) -> None:
        self.seen("out", out.decoded)
        await self.inner.send(out)

    async def aclose(self) -> None:
        await self.inner.aclose()
