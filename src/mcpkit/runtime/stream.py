"""The tiny interface every transport offers the runtime, and an in-memory pair for tests."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

import anyio
import orjson

if TYPE_CHECKING:  # anyio's memory streams cost ~8 ms to import; a stdio server never needs them
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..protocol.errors import INTERNAL_ERROR, LocalError
from ..protocol.events import Event
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import RequestId, answered_id, encode, error_response
from .origin import Origin

__all__ = [
    "Fed",
    "Inbox",
    "MemoryStream",
    "MessageStream",
    "Outgoing",
    "Oversized",
    "Processed",
    "Restored",
    "encoded",
    "memory_pair",
]

JSON = dict[str, Any]
T = TypeVar("T")


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


def encoded(message: JSON, related: RequestId | None = None) -> Outgoing:
    """`message` ready to send. A result that cannot be encoded still answers its request: -32603, so
    the peer never waits for an answer that will not come; any other message is the caller's error."""
    try:
        return Outgoing(encode(message), related, message)
    except TypeError as exc:  # orjson.JSONEncodeError: e.g. an integer beyond 64 bits
        logging.getLogger("mcpkit").error("a message could not be encoded as JSON: %s", exc)
        if "result" not in message or "id" not in message:
            raise LocalError(f"the message cannot be encoded as JSON: {exc}", INTERNAL_ERROR) from exc
        text = f"Internal error: the result cannot be encoded as JSON: {exc}"
        replaced = error_response(message["id"], INTERNAL_ERROR, text)
        return Outgoing(encode(replaced), related, replaced)


@dataclass(frozen=True, slots=True)
class Restored:
    """What a session's handshake agreed, kept where every process serving the session can read it."""

    version: str
    client_capabilities: JSON
    client_info: JSON
    log_level: str | None = None


class Processed(NamedTuple):
    """What a stream's `feed` left for the reader: events of a message already taken in (see `Fed`)."""

    events: list[Event]


@runtime_checkable
class Fed(Protocol):
    """A stream whose sender may hand a message to the Session directly while its reader waits with
    nothing to read: the Session sets `feed` while it runs (asyncio only). `feed(message, origin)`
    starts the message's request and returns the events left for the reader, which the stream then
    queues as `Processed`, before anything sent after it."""

    feed: Callable[[bytes | JSON, Origin | None], list[Event]] | None


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
    client: the session is served as if this connection had been initialized), `request_ids` (an
    iterator our request ids are taken from, unique beyond this connection) and `authorizing` (a
    callable: whether the transport is waiting on the user at a login, time that is not the peer's).
    """

    async def receive(self) -> bytes | bytearray | JSON | Oversized | Processed: ...

    async def send(self, out: Outgoing) -> None: ...

    async def aclose(self) -> None: ...


class Inbox(Generic[T]):
    """What a MessageStream's `receive` returns, in order, unbounded (a transport's reader puts, the
    session gets): `get` raises anyio.EndOfStream once the inbox is ended and drained, or closed."""

    __slots__ = ("_receive", "_send")

    def __init__(self) -> None:
        self._send: MemoryObjectSendStream[T]
        self._receive: MemoryObjectReceiveStream[T]
        self._send, self._receive = anyio.create_memory_object_stream[T](math.inf)

    def put(self, item: T) -> bool:
        """False, and nothing kept, once the inbox is ended or closed."""
        try:
            self._send.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True

    async def get(self) -> T:
        try:
            return await self._receive.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise anyio.EndOfStream from None

    def end(self) -> None:
        """Nothing more is put; what is in it is still got."""
        self._send.close()

    def close(self) -> None:
        """Ended and emptied: a waiting `get` ends, a later `put` is refused."""
        self._send.close()
        self._receive.close()


class MemoryStream:
    """One end of an in-memory pair; bytes still cross it, so tests never skip serialization."""

    def __init__(self, inbox: Inbox[bytes], outbox: Inbox[bytes]) -> None:
        self._inbox = inbox
        self._outbox = outbox  # the other end's inbox

    async def receive(self) -> bytes | Oversized:
        return await self._inbox.get()

    async def send(self, out: Outgoing | bytes) -> None:
        """Send a message; a test may hand over a bare frame as bytes (a malformed one, say)."""
        if not self._outbox.put(out if isinstance(out, bytes) else out.data):
            raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        self._outbox.end()
        self._inbox.close()


def memory_pair() -> tuple[MemoryStream, MemoryStream]:
    """Two connected in-memory ends."""
    a, b = Inbox[bytes](), Inbox[bytes]()
    return MemoryStream(a, b), MemoryStream(b, a)
