"""What a Connection reports after receiving a message: immutable values, one per happening."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from .errors import RemoteError
from .jsonrpc import RequestId
from .lifecycle import Negotiated

__all__ = [
    "CancelledByPeer",
    "ErrorReceived",
    "Event",
    "NotificationReceived",
    "ProgressReceived",
    "Ready",
    "RequestReceived",
    "ResponseReceived",
    "SendMessage",
]

JSON: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """A request the application must answer with `respond` or `respond_error`."""

    id: RequestId
    method: str
    params: JSON
    # The agreement it is served under: the handshake's, or a stateless (2026-07-28) request's own.
    negotiated: Negotiated


@dataclass(frozen=True, slots=True)
class NotificationReceived:
    method: str
    params: JSON


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    id: RequestId
    result: JSON


@dataclass(frozen=True, slots=True)
class ErrorReceived:
    id: RequestId
    error: RemoteError


@dataclass(frozen=True, slots=True)
class CancelledByPeer:
    """The peer cancelled its request `id`; no response will be sent for it (utilities "Cancellation")."""

    id: RequestId
    reason: str | None


@dataclass(frozen=True, slots=True)
class ProgressReceived:
    """Progress on our outbound request `request_id` (utilities "Progress")."""

    request_id: RequestId
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True, slots=True)
class Ready:
    """Initialization finished; `negotiated` holds the version and both sides' capabilities."""

    negotiated: Negotiated


@dataclass(frozen=True, slots=True)
class SendMessage:
    """A message the core itself produced (an error reply, a ping answer, the initialize exchange)."""

    message: JSON


Event: TypeAlias = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | CancelledByPeer
    | ProgressReceived
    | Ready
    | SendMessage
)
