"""The tiny interface every transport offers the runtime, and an in-memory pair for tests."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio
import orjson

if TYPE_CHECKING:  # anyio's memory streams cost ~8 ms to import; a stdio server never needs them
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..protocol.framing import Oversized
from ..protocol.jsonrpc import RequestId, answered_id

__all__ = ["MemoryStream", "MessageStream", "Outgoing", "Oversized", "Restored", "memory_pair"]

JSON = dict[str, Any]


class Outgoing(NamedTuple):
    """One message to send: its encoding, the inbound request it belongs to (its response, or what
    its handler sends; for transports that route by it) and the message itself, so a transport
    that routes or reads headers off it never parses what the Session has just encoded."""

    data: bytes
    related: RequestId | None = None
    message: JSON | None = None  # None for bytes made elsewhere (a test's hand-written frame)

    @property
    def decoded(self) -> JSON:
        """The message; parsed from `data` only for bytes made elsewhere ({} if not a JSON object)."""
        if self.message is not None:
            return self.message
        try:
            parsed = orjson.loads(self.data)
        except orjson.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}

    @property
    def answers(self) -> RequestId | None:
        """The id this message answers, if it is a response (result or error)."""
        return answered_id(self.message if self.message is not None else self.decoded)


@dataclass(frozen=True, slots=True)
class Restored:
    """What a session's handshake agreed, kept where every process serving the session can read it."""

    version: str
    client_capabilities: JSON
    client_info: JSON
    log_level: str | None = None


class MessageStream(Protocol):
    """A duplex stream of framed messages: one JSON-RPC message per item.

    A received message is bytes, or a bytearray (stdio hands over the buffer a long line was
    gathered in rather than copy it; it is only ever parsed, never kept or hashed), or the decoded
    JSON object when the transport had to decode it already to route it (Streamable HTTP).

    `receive` raises `anyio.EndOfStream` when the peer is gone, and returns `Oversized` for a
    message the transport refused to hold whole.

    Optional attributes a stream may have: `received_from` (the `Origin` of the message `receive`
    returned last, for a transport that knows more than its bytes), `eof_grace` (seconds the requests
    already read may still be answered once input ends) and `pre_agreed` (a protocol version the
    server side proceeds with without an initialize, for a transport that serves handshake-era
    messages with no session), `restored` (a `Restored` agreement another process made with the
    client: the session is served as if this connection had been initialized) and `request_ids` (an
    iterator our request ids are taken from, unique beyond this connection).
    """

    async def receive(self) -> bytes | bytearray | JSON | Oversized: ...

    async def send(self, out: Outgoing) -> None: ...

    async def aclose(self) -> None: ...


class MemoryStream:
    """One end of an in-memory pair; bytes still cross it, so tests never skip serialization."""

    def __init__(
        self, inbox: MemoryObjectReceiveStream[bytes], outbox: MemoryObjectSendStream[bytes]
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox

    async def receive(self) -> bytes | Oversized:
        try:
            return await self._inbox.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def send(self, out: Outgoing | bytes) -> None:
        """Send a message; a test may hand over a bare frame as bytes (a malformed one, say)."""
        try:
            await self._outbox.send(out if isinstance(out, bytes) else out.data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        await self._outbox.aclose()
        await self._inbox.aclose()


def memory_pair() -> tuple[MemoryStream, MemoryStream]:
    """Two connected in-memory ends."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](math.inf)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryStream(a_receive, a_send), MemoryStream(b_receive, b_send)
