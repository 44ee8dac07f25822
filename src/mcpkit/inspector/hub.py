"""What the page is told as it happens (messages, logs, progress, questions from the server): numbered
events, a bounded history replayed to each new listener, and a queue per listener."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..protocol.jsonrpc import JSON

__all__ = ["Hub"]


class Hub:
    """Broadcasts events to every open page; a page opened later first gets the last `keep` events."""

    def __init__(self, keep: int = 5000) -> None:
        self.history: deque[JSON] = deque(maxlen=keep)
        self._seq = 0
        self._listeners: set[MemoryObjectSendStream[JSON]] = set()

    def publish(self, kind: str, **fields: Any) -> JSON:
        self._seq += 1
        event = {"seq": self._seq, "at": int(time.time() * 1000), "kind": kind, **fields}
        self.history.append(event)
        for listener in list(self._listeners):
            try:
                listener.send_nowait(event)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._listeners.discard(listener)  # a page too slow to keep up is dropped; it reconnects
        return event

    def close(self) -> None:
        """Ends every listener's stream (the inspector is stopping): open pages see the end, not an error."""
        for listener in list(self._listeners):
            listener.close()
        self._listeners.clear()

    @asynccontextmanager
    async def listen(self, after: int = 0) -> AsyncIterator[MemoryObjectReceiveStream[JSON]]:
        """The events after `after` (from the history), then each new one as it comes."""
        send, receive = anyio.create_memory_object_stream[JSON](math.inf)
        for event in self.history:
            if event["seq"] > after:
                send.send_nowait(event)
        self._listeners.add(send)
        try:
            yield receive
        finally:
            self._listeners.discard(send)
            send.close()
            receive.close()
