"""What comes back to the Streamable HTTP client: each message decoded once, the response recognised,
and the failures that end a request's reading early."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...protocol.errors import MCPError
from ...protocol.framing import Oversized
from ...protocol.jsonrpc import answered_id, decode
from ...protocol.sse import SSEDecoder
from ...runtime.origin import Origin

__all__ = ["Inbound", "NotAnAnswer", "Related", "TooLarge", "answers", "decoded", "progressed", "related"]

JSON = dict[str, Any]
Inbound = bytes | JSON | Oversized  # what the session is handed: undecodable bytes stay bytes


class Related(NamedTuple):
    """A server's request that came on the response stream of one of ours (`origin.answering`)."""

    message: JSON
    origin: Origin


def related(message: bytes | JSON, rid: Any) -> bytes | JSON | Related:
    """`message` marked as related to our request `rid` when it is a request of the server's: so the
    client's handler can tell which of its calls the server asks in (a proxy routes by it)."""
    if rid is not None and isinstance(message, dict) and "method" in message and "id" in message:
        return Related(message, Origin(answering=rid))
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
