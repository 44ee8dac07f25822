"""One small error tree, split by who is at fault, each error carrying its JSON-RPC code.

`RemoteError` is the peer's fault: it came from the wire, or it is what we answer a bad message with.
`LocalError` is this program's misuse of the API and is raised before anything is sent.
`to_wire_error` is the only place an exception becomes a JSON-RPC error object.
"""

from __future__ import annotations

from typing import Any, Final

from .versions import Feature, has

__all__ = [
    "CONNECTION_CLOSED",
    "CONNECTION_FAILED_DATA",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REPLACED_CODES",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "SERVER_BUSY",
    "STORE_UNAVAILABLE",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "CapabilityError",
    "ConnectionFailed",
    "InvalidParams",
    "InvalidRequest",
    "LocalError",
    "MCPError",
    "MethodNotFound",
    "RemoteError",
    "RequestCancelled",
    "to_wire_error",
]

# JSON-RPC 2.0 section 5.1.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# MCP: resources "Error Handling" (2024-11-05 .. 2025-11-25).
RESOURCE_NOT_FOUND: Final = -32002
# MCP 2025-11-25 elicitation "URL Elicitation Required Error".
URL_ELICITATION_REQUIRED: Final = -32042
# MCP 2026-07-28 basic "Error Codes" (the -32020..-32099 range is the specification's).
HEADER_MISMATCH: Final = -32020
MISSING_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
# Codes the SDKs use for a request that timed out or whose connection closed (no spec number exists).
REQUEST_TIMEOUT: Final = -32001
CONNECTION_CLOSED: Final = -32000
# mcpkit's own server error (JSON-RPC 2.0 5.1 leaves -32000..-32099 to implementations; below -32020,
# which the 2026-07-28 specification keeps): a request refused because its session has too many in flight.
SERVER_BUSY: Final = -32010
# mcpkit's own too: a store the server shares with other processes (Redis) cannot be reached; HTTP 503
STORE_UNAVAILABLE: Final = -32011
# what a client transport puts in the error it answers a request with when the connection failed
CONNECTION_FAILED_DATA: Final = {"connectionFailed": True}


class MCPError(Exception):
    """An error with a JSON-RPC code, a message and optional data."""

    code: int
    message: str
    data: Any

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, Any]:
        return error_object(self.code, self.message, self.data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r})"


class RemoteError(MCPError):
    """The peer violated the protocol, or answered a request with an error."""

    @classmethod
    def from_wire(cls, error: dict[str, Any]) -> RemoteError:
        code = error.get("code")
        message = error.get("message")
        data = error.get("data")
        kind = ConnectionFailed if code == CONNECTION_CLOSED and data == CONNECTION_FAILED_DATA else cls
        return kind(
            code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
            message if isinstance(message, str) else "error without a message",
            data,
        )


class InvalidRequest(RemoteError):
    """-32600: the message is no valid request (JSON-RPC 2.0 5.1)."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_REQUEST, message, data)


class MethodNotFound(RemoteError):
    """-32601: the method does not exist or is not offered here."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(METHOD_NOT_FOUND, message, data)


class InvalidParams(RemoteError):
    """-32602: the request's params are wrong: a bad argument, an unknown name, a stale cursor."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_PARAMS, message, data)


class ConnectionFailed(RemoteError):
    """The server could not be reached (refused, TLS, timed out) or the connection broke mid-exchange: the
    transport answered the request itself. `data` is CONNECTION_FAILED_DATA."""


class LocalError(MCPError):
    """This side misused the API (for example, asked for a capability the peer never declared)."""

    def __init__(self, message: str, code: int = INVALID_REQUEST, data: Any = None) -> None:
        super().__init__(code, message, data)


class CapabilityError(LocalError):
    """A feature was used that the negotiated capabilities do not allow."""

    def __init__(self, message: str) -> None:
        super().__init__(message, METHOD_NOT_FOUND)


class RequestCancelled(MCPError):
    """Our own request was cancelled (by timeout or by the caller) before a response came."""

    def __init__(self, message: str, code: int = REQUEST_TIMEOUT) -> None:
        super().__init__(code, message)


# A code some versions lack: code -> (the feature that has it, what replaces it without).
# 2026-07-28 basic "Error Codes": -32002 MUST NOT be emitted; resource not found is -32602.
REPLACED_CODES: Final[dict[int, tuple[Feature, int]]] = {
    RESOURCE_NOT_FOUND: (Feature.RESOURCE_NOT_FOUND_CODE, INVALID_PARAMS),
}


def error_object(code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error object: the one place one is built (a message carrying it: jsonrpc.error_response)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def to_wire_error(exc: BaseException, version: str | None = None) -> dict[str, Any]:
    """Turn any exception raised by a handler into a JSON-RPC error object, in the codes `version` has.

    Only `MCPError` carries its message to the peer; anything else is an internal error whose
    details stay on this side (the caller logs the traceback).
    """
    if not isinstance(exc, MCPError):
        return error_object(INTERNAL_ERROR, "Internal error")
    error = exc.to_wire()
    replaced = REPLACED_CODES.get(exc.code) if version is not None else None
    if replaced is not None and version is not None and not has(version, replaced[0]):
        error["code"] = replaced[1]
    return error
