"""The tiny interface every transport offers the runtime, and an in-memory pair for tests."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar, overload

import anyio
import orjson
from anyio import TypedAttributeLookupError, TypedAttributeSet, typed_attribute

if TYPE_CHECKING:  # anyio's memory streams cost ~8 ms to import; a stdio server never needs them
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..protocol.errors import INTERNAL_ERROR, LocalError
from ..protocol.framing import Oversized
from ..protocol.jsonrpc import JSON, RequestId, answered_id, encode, error_response
from .origin import Origin

__all__ = [
    "Attributes",
    "Deliver",
    "Inbound",
    "Inbox",
    "MemoryStream",
    "MessageStream",
    "Outgoing",
    "Oversized",
    "Restored",
    "StreamAttribute",
    "WrappedStream",
    "deliver_each",
    "encoded",
    "memory_pair",
]

T = TypeVar("T")
D = TypeVar("D")
_MISSING: Any = object()


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


class Inbound(NamedTuple):
    """One inbound message and what its transport knew of it (None: only its bytes, as over stdio).

    `data` is bytes, or a bytearray (stdio hands over the buffer a long line was gathered in rather
    than copy it; it is only ever parsed, never kept or hashed), or the decoded JSON object when the
    transport had to decode it already to route it (Streamable HTTP), or `Oversized` for a message the
    transport refused to hold whole."""

    data: bytes | bytearray | JSON | Oversized
    origin: Origin | None = None


Deliver = Callable[[Inbound], Awaitable[None]]


class StreamAttribute(TypedAttributeSet):
    """What a transport agreed for a whole connection: `stream.extra(StreamAttribute.x, default)`."""

    eof_grace: float = typed_attribute()
    """Seconds the requests already read may still be answered once input ends (stdio)."""
    pre_agreed: str = typed_attribute()
    """A protocol version the server side proceeds with without an initialize (a transport serving
    handshake-era messages with no session)."""
    restored: Restored = typed_attribute()
    """An agreement another process made with the client: served as if this connection had been
    initialized."""
    request_ids: Iterator[RequestId] = typed_attribute()
    """Where our request ids are taken from, unique beyond this connection."""
    session_id: str = typed_attribute()
    """The transport's session (Streamable HTTP's Mcp-Session-Id): for state kept beyond this process."""
    authorizing: Callable[[], bool] = typed_attribute()
    """Whether the transport waits on the user at a login now: time that is not the peer's."""


class Attributes:
    """anyio's typed-attribute provider, for classes with `__slots__` (anyio's own base has none)."""

    __slots__ = ()

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        return {}

    @overload
    def extra(self, attribute: T) -> T: ...
    @overload
    def extra(self, attribute: T, default: D) -> T | D: ...
    def extra(self, attribute: Any, default: Any = _MISSING) -> Any:
        getter = self.extra_attributes.get(attribute)
        if getter is not None:
            return getter()
        if default is _MISSING:
            raise TypedAttributeLookupError("Attribute not found")
        return default


class MessageStream(Protocol):
    """A duplex stream of framed messages, one JSON-RPC message per item, pushed in one direction:
    `deliver_to(deliver)` hands every inbound message to `deliver`, in order, until the peer is gone
    (then it returns); a transport whose messages arrive in other tasks (Streamable HTTP's POSTs) calls
    `deliver` from those tasks. `extra` reads the connection's `StreamAttribute`s."""

    async def deliver_to(self, deliver: Deliver) -> None: ...

    async def send(self, out: Outgoing) -> None: ...

    async def aclose(self) -> None: ...

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]: ...

    @overload
    def extra(self, attribute: T) -> T: ...
    @overload
    def extra(self, attribute: T, default: D) -> T | D: ...


class WrappedStream(Attributes):
    """A MessageStream that passes everything to `inner`: a base for one that watches or changes what
    crosses it (override `send`, or `deliver_to` with a `deliver` of its own)."""

    def __init__(self, inner: MessageStream) -> None:
        self.inner = inner

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        return self.inner.extra_attributes

    async def deliver_to(self, deliver: Deliver) -> None:
        await self.inner.deliver_to(deliver)

    async def send(self, out: Outgoing) -> None:
        await self.inner.send(out)

    async def aclose(self) -> None:
        await self.inner.aclose()


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


class MemoryStream(Attributes):
    """One end of an in-memory pair; bytes still cross it, so tests never skip serialization."""

    __slots__ = ("_inbox", "_outbox")

    def __init__(self, inbox: Inbox[bytes], outbox: Inbox[bytes]) -> None:
        self._inbox = inbox
        self._outbox = outbox  # the other end's inbox

    async def deliver_to(self, deliver: Deliver) -> None:
        await deliver_each(self._inbox, deliver)

    async def receive(self) -> bytes:
        """The next message, for a test that plays the raw peer on this end (no Session reads it)."""
        return await self._inbox.get()

    async def send(self, out: Outgoing | bytes) -> None:
        """Send a message; a test may hand over a bare frame as bytes (a malformed one, say)."""
        if not self._outbox.put(out if isinstance(out, bytes) else out.data):
            raise anyio.BrokenResourceError

    async def aclose(self) -> None:
        self._outbox.end()
        self._inbox.close()


async def deliver_each(inbox: Inbox[Any], deliver: Deliver) -> None:
    """Hand each item of `inbox` to `deliver`, in order, until the inbox ends: an `Inbound` as it is,
    anything else as the data of one (for a transport whose own tasks put what arrives in an inbox)."""
    get = inbox.get
    while True:
        try:
            item = await get()
        except anyio.EndOfStream:
            return
        await deliver(item if type(item) is Inbound else Inbound(item))


def memory_pair() -> tuple[MemoryStream, MemoryStream]:
    """Two connected in-memory ends."""
    a, b = Inbox[bytes](), Inbox[bytes]()
    return MemoryStream(a, b), MemoryStream(b, a)
