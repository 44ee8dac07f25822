"""What comes back to the Streamable HTTP client: each message decoded once, the response recognised,
and the failures that end a request's reading early."""

from __future__ import annotations

from typing import Any

from ...protocol.errors import MCPError
from ...protocol.framing import Oversized
from ...protocol.jsonrpc import JSON, answered_id, decode
from ...protocol.sse import SSEDecoder
from ...runtime.origin import Origin
from ...runtime.stream import Inbound

__all__ = ["NotAnAnswer", "Payload", "TooLarge", "answers", "decoded", "progressed", "related"]

Payload = bytes | JSON | Oversized  # what the session is handed: undecodable bytes stay bytes


def related(message: bytes | JSON, rid: Any) -> bytes | JSON | Inbound:
    """`message` marked as related to our request `rid` (`Origin.answering`) when it is a request of
    the server's that came on that request's response stream: so the client's handler can tell which
    of its calls the server asks in (a proxy routes by it)."""
    if rid is not None and isinstance(message, dict) and "method" in message and "id" in message:
        return Inbound(message, Origin(answering=rid))
    return message


def decoded(payload: bytes) -> bytes | JSON:
    """The message `payload` encodes, or the bytes themselves if it is no JSON object (the session
    answers those as it would any malformed input)."""
    try:
        message = decode(payload)
    except MCPError:
        return payload
    return message if isinstance(message, dict) else payload


def answers(message: bytes | JSON, rid: Any) -> bool:
    """Whether `message` is the response (result or error) to request `rid`."""
    return isinstance(message, dict) and answered_id(message) == rid


class TooLarge(Exception):
    pass


class NotAnAnswer(Exception):
    """A request's POST got something that is no MCP answer; the text says what came back."""


def progressed(decoder: SSEDecoder, last_id: str | None) -> bool:
    """Whether a reopened stream brought anything: an event with data, or a new event id."""
    return decoder.dispatched > 0 or decoder.last_event_id not in (None, last_id)
