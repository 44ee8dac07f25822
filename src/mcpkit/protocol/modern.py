"""The stateless era (2026-07-28): what every request carries in `_meta`, and what every result gets.

Spec 2026-07-28: basic "`_meta`" (per-request and per-response protocol fields), versioning
"Protocol Version Negotiation", basic "Responses" (`resultType`), patterns "Multi Round-Trip
Requests" (which methods may answer input_required).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from .errors import (
    INVALID_PARAMS,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
    RemoteError,
)
from .levels import LEVELS
from .versions import is_modern

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "INPUT_REQUIRED_METHODS",
    "LOG_LEVEL",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "RequestMeta",
    "finish_result",
    "is_modern_request",
    "missing_capability",
    "read_request_meta",
    "request_meta",
    "result_type",
]

JSON = dict[str, Any]

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

# patterns "Multi Round-Trip Requests", "Supported Requests": no other request may answer input_required.
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
_RESULT_TYPES: Final = frozenset({"complete", "input_required"})


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """What a modern request says about itself."""

    version: str
    client_capabilities: JSON
    client_info: JSON
    log_level: str | None


def is_modern_request(params: JSON) -> bool:
    """Whether a request names its protocol version in `_meta` (the mark of the stateless era)."""
    meta = params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION in meta


def read_request_meta(params: JSON, supported: tuple[str, ...]) -> RequestMeta:
    """The request's protocol fields; -32602 when a required one is missing, -32022 for a version
    this side does not serve (with `supported` and `requested`, as versioning requires)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise RemoteError(
            INVALID_PARAMS,
            f"Invalid params: the request has no _meta; a {_newest(supported)} request must carry "
            f"{PROTOCOL_VERSION} and {CLIENT_CAPABILITIES} (or the client must initialize first)",
        )
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise RemoteError(INVALID_PARAMS, f"Invalid params: _meta lacks a string {PROTOCOL_VERSION}")
    if version not in supported or not is_modern(version):
        data = {"supported": list(reversed(supported)), "requested": version}
        raise RemoteError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)
    capabilities = meta.get(CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise RemoteError(INVALID_PARAMS, f"Invalid params: _meta lacks an object {CLIENT_CAPABILITIES}")
    info = meta.get(CLIENT_INFO)
    level = meta.get(LOG_LEVEL)
    if level is not None and level not in LEVELS:
        raise RemoteError(INVALID_PARAMS, f"Invalid params: {LOG_LEVEL} {level!r} is not a log level")
    return RequestMeta(version, capabilities, info if isinstance(info, dict) else {}, level)


def _newest(supported: tuple[str, ...]) -> str:
    modern = [v for v in supported if is_modern(v)]
    return modern[-1] if modern else supported[-1]


def request_meta(version: str, capabilities: JSON, info: JSON, log_level: str | None = None) -> JSON:
    """The client's side: the protocol fields for one request's `_meta`."""
    meta: JSON = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: capabilities, CLIENT_INFO: info}
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    return meta


def finish_result(method: str, result: JSON, server_info: JSON | None) -> JSON:
    """A modern result as sent: `resultType` present (basic "Responses") and the server named in `_meta`.

    The result is copied, never changed in place: handlers may hand back cached results.
    """
    kind = result.get("resultType", "complete")
    if kind == "input_required" and method not in INPUT_REQUIRED_METHODS:
        raise ValueError(f"{method} may not answer input_required (patterns: Multi Round-Trip Requests)")
    out = dict(result)
    out["resultType"] = kind
    if server_info is not None:
        meta = out.get("_meta")
        out["_meta"] = {**(meta if isinstance(meta, dict) else {}), SERVER_INFO: server_info}
    return out


def result_type(result: JSON) -> str:
    """The client's side: a result's type; absent means complete (basic "Responses", for older servers)."""
    kind = result.get("resultType", "complete")
    if kind not in _RESULT_TYPES:
        raise RemoteError(INVALID_PARAMS, f"The server answered with an unknown resultType {kind!r}")
    return str(kind)


def missing_capability(*paths: tuple[str, ...]) -> MCPError:
    """MissingRequiredClientCapability (-32021): `requiredCapabilities` is a ClientCapabilities object."""
    required: JSON = {}
    for path in paths:
        node = required
        for key in path:
            node = node.setdefault(key, {})
    names = ", ".join(".".join(p) for p in paths)
    return MCPError(
        MISSING_CLIENT_CAPABILITY,
        f"The server requires the client capability {names} for this request",
        {"requiredCapabilities": required},
    )
