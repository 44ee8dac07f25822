"""The JSON-RPC 2.0 envelope: decode bytes, classify a message, build replies.

Spec: MCP basic ("Messages"): requests carry a string or integer id (never null), responses carry the
same id and exactly one of `result` or `error`, notifications carry no id. Batches are not supported
(removed in 2025-06-18; a batch is answered with -32600).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import orjson

from .errors import INVALID_REQUEST, PARSE_ERROR, MCPError, error_object

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "JSON",
    "ErrorResponse",
    "InvalidMessage",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "answered_id",
    "classify",
    "decode",
    "encode",
    "error_message",
    "notification_message",
    "request_message",
    "result_message",
]

RequestId: TypeAlias = str | int
JSON: TypeAlias = dict[str, Any]

DEFAULT_MAX_DEPTH: Final = 128


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: JSON


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: JSON


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId
    result: JSON


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    id: RequestId | None
    error: JSON


Message: TypeAlias = Request | Notification | Response | ErrorResponse


class InvalidMessage(MCPError):
    """A message that cannot be accepted; `request_id` is what the error reply echoes (or None).

    `response` marks a malformed response (no method, a result or an error): it is never answered,
    since a reply to a response would carry an id the peer takes for one of its own requests.
    """

    def __init__(
        self, code: int, message: str, request_id: RequestId | None = None, *, response: bool = False
    ) -> None:
        super().__init__(code, message)
        self.request_id = request_id
        self.response = response


def encode(message: JSON) -> bytes:
    return orjson.dumps(message)


def decode(data: bytes | bytearray | str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse one JSON text. Invalid JSON, invalid UTF-8 and over-deep nesting are -32700."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InvalidMessage(PARSE_ERROR, f"Parse error: {exc.msg}") from None
    # Counting brackets is a C-speed upper bound on depth, so the walk runs only when it might matter.
    raw = data.encode() if isinstance(data, str) else data
    if raw.count(b"{") + raw.count(b"[") > max_depth and _depth_exceeds(value, max_depth):
        raise InvalidMessage(PARSE_ERROR, f"Parse error: JSON nested deeper than {max_depth} levels")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def _is_int(value: Any) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def _valid_id(value: Any) -> bool:
    kind = type(value)  # the exact types a decoder makes first, as every message has an id
    return kind is int or kind is str or isinstance(value, str) or _is_int(value)


def classify(obj: Any) -> Message:
    """Turn a decoded JSON value into a message, or raise InvalidMessage (-32600)."""
    if not isinstance(obj, dict):
        kind = "a batch (batching is not supported)" if isinstance(obj, list) else "not an object"
        raise InvalidMessage(INVALID_REQUEST, f"Invalid Request: message is {kind}")
    raw_id = obj.get("id")
    echo_id = raw_id if _valid_id(raw_id) else None
    method = obj.get("method")
    if method is None and ("result" in obj or "error" in obj):
        return _response(obj, echo_id, raw_id)
    if obj.get("jsonrpc") != "2.0":
        raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', echo_id)
    params = obj.get("params")
    if params is None:
        params = {}
    if method is None:
        raise InvalidMessage(
            INVALID_REQUEST, 'Invalid Request: a response needs exactly one of "result" or "error"', echo_id
        )
    if not isinstance(method, str):
        raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "method" must be a string', echo_id)
    if not isinstance(params, dict):
        raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "params" must be an object', echo_id)
    if "id" not in obj:
        return Notification(method, params)
    if echo_id is None:
        raise InvalidMessage(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
    return Request(echo_id, method, params)


def _response(obj: JSON, echo_id: RequestId | None, raw_id: Any) -> Response | ErrorResponse:
    def bad(why: str) -> InvalidMessage:
        return InvalidMessage(INVALID_REQUEST, f"Invalid response: {why}", echo_id, response=True)

    if obj.get("jsonrpc") != "2.0":
        raise bad('"jsonrpc" must be "2.0"')
    if "result" in obj and "error" in obj:
        raise bad('a response needs exactly one of "result" or "error"')
    if raw_id is not None and echo_id is None:
        raise bad('"id" must be a string or an integer')
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, dict) or not _is_int(error.get("code")):
            raise bad('"error" must be an object with an integer code')
        return ErrorResponse(echo_id, error)
    if echo_id is None:
        raise bad('"id" must be a string or an integer')
    if not isinstance(obj["result"], dict):
        raise bad('"result" must be an object')
    return Response(echo_id, obj["result"])


def request_message(request_id: RequestId, method: str, params: JSON | None) -> JSON:
    message: JSON = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params:
        message["params"] = params
    return message


def notification_message(method: str, params: JSON | None) -> JSON:
    message: JSON = {"jsonrpc": "2.0", "method": method}
    if params:
        message["params"] = params
    return message


def result_message(request_id: RequestId, result: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_message(request_id: RequestId | None, error: JSON) -> JSON:
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def error_response(request_id: RequestId | None, code: int, message: str, data: Any = None) -> JSON:
    """An error response with the error object built by `errors.error_object`."""
    return error_message(request_id, error_object(code, message, data))


def answered_id(message: JSON) -> RequestId | None:
    """The id a decoded message answers, if it is a response (a result or an error); else None."""
    if "method" in message or ("result" not in message and "error" not in message):
        return None
    rid = message.get("id")
    return rid if _valid_id(rid) else None
