"""The messages the core answers or consumes itself, as tables keyed by method.

Spec: lifecycle "Initialization", basic utilities "Ping", server utilities "Logging"
(logging/setLevel), utilities "Cancellation" and "Progress". Everything else reaches the
application as an event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from . import events as ev
from . import jsonrpc as rpc
from .errors import RemoteError
from .jsonrpc import RequestId
from .lifecycle import Trigger, accept_initialize, advance, check_initialize_result
from .utilities import read_level

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["CORE_NOTIFICATIONS", "CORE_REQUESTS", "CORE_RESULTS"]

JSON = dict[str, Any]


def _accept_initialize(conn: Connection, rid: RequestId, params: JSON) -> list[ev.Event]:
    conn.phase = advance(conn.role, conn.phase, Trigger.RECEIVE_INITIALIZE, "initialize")
    own = conn.versions, conn.info, conn.capabilities, conn.instructions
    conn.negotiated, result = accept_initialize(params, *own)
    return [ev.SendMessage(rpc.result_message(rid, result)), ev.Ready(conn.negotiated)]


def _pong(conn: Connection, rid: RequestId, params: JSON) -> list[ev.Event]:
    return [ev.SendMessage(rpc.result_message(rid, {}))]


def _set_level(conn: Connection, rid: RequestId, params: JSON) -> list[ev.Event]:
    conn.log_level = read_level(params)
    return [ev.SendMessage(rpc.result_message(rid, {}))]


def _initialized(conn: Connection, rid: RequestId, outcome: JSON | RemoteError) -> list[ev.Event]:
    """The client's side: the initialize result (or error) ends the handshake either way."""
    try:
        if isinstance(outcome, RemoteError):
            raise outcome
        negotiated = check_initialize_result(outcome, conn.info, conn.capabilities, conn.versions)
    except RemoteError as exc:
        conn.phase = advance(conn.role, conn.phase, Trigger.INITIALIZE_FAILED, "initialize")
        return [ev.ErrorReceived(rid, exc)]
    conn.phase = advance(conn.role, conn.phase, Trigger.INITIALIZE_RESULT, "initialize")
    conn.negotiated = negotiated
    done = ev.SendMessage(rpc.notification_message("notifications/initialized", None))
    return [ev.ResponseReceived(rid, outcome), done, ev.Ready(negotiated)]


def _progressed(conn: Connection, params: JSON) -> list[ev.Event]:
    return list(conn.calls.progressed(params))


def _cancelled(conn: Connection, params: JSON) -> list[ev.Event]:
    return list(conn.calls.peer_cancelled(params))


# Requests the core answers: method -> handler(connection, id, params).
CORE_REQUESTS: Final[dict[str, Callable[[Connection, RequestId, JSON], list[ev.Event]]]] = {
    "initialize": _accept_initialize,
    "ping": _pong,
    "logging/setLevel": _set_level,
}
# Notifications the core consumes: method -> handler(connection, params).
CORE_NOTIFICATIONS: Final[dict[str, Callable[[Connection, JSON], list[ev.Event]]]] = {
    "notifications/progress": _progressed,
    "notifications/cancelled": _cancelled,
}
# Answers to our own requests that the core consumes: method -> handler(connection, id, result or error).
CORE_RESULTS: Final[dict[str, Callable[[Connection, RequestId, JSON | RemoteError], list[ev.Event]]]] = {
    "initialize": _initialized,
}
