"""The stateless era (2026-07-28): what every request carries in `_meta`, and what every result gets.

Spec 2026-07-28: basic "`_meta`" (per-request and per-response protocol fields), versioning
"Protocol Version Negotiation", basic "Responses" (`resultType`), patterns "Multi Round-Trip
Requests" (which methods may answer input_required).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import capabilities as caps
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    LocalError,
    MCPError,
    RemoteError,
)
from .jsonrpc import JSON
from .levels import LEVELS
from .lifecycle import Negotiated, declared_at
from .methods import ASKS_CLIENT
from .versions import STATELESS_VERSIONS, is_stateless

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "RequestMeta",
    "accept_stateless",
    "finish_result",
    "is_stateless_request",
    "missing_capability",
    "read_request_meta",
    "request_meta",
    "result_type",
    "served_statelessly",
    "serves_stateless",
    "subscription_notification",
    "with_request_meta",
]

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

_RESULT_TYPES: Final = frozenset({"complete", "input_required", "task"})  # task: the tasks extension


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """What a stateless request says about itself."""

    version: str
    client_capabilities: JSON
    client_info: JSON
    log_level: str | None


def is_stateless_request(params: JSON) -> bool:
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
    if version not in supported or not is_stateless(version):
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


def serves_stateless(versions: tuple[str, ...]) -> bool:
    """Whether a server configured with `versions` serves any stateless (2026-07-28) version."""
    return any(version in STATELESS_VERSIONS for version in versions)


def served_statelessly(
    receiver: caps.Role, versions: tuple[str, ...], method: str, params: JSON, before_handshake: bool
) -> bool:
    """Whether a server configured with `versions` serves this request statelessly. versioning
    "Backward Compatibility": a request with the stateless `_meta` is stateless; before any handshake,
    so is all but what may open the initialize era (initialize, ping)."""
    marked = is_stateless_request(params)
    if receiver is not caps.Role.SERVER or not (marked or before_handshake) or not serves_stateless(versions):
        return False
    if marked:
        return True
    rule = caps.METHODS.get(method)
    return not (rule is not None and rule.handshake and rule.before_ready and not rule.notification)


def accept_stateless(
    method: str,
    params: JSON,
    versions: tuple[str, ...],
    info: JSON,
    capabilities: JSON,
    instructions: str | None,
    extension_rules: Mapping[str, caps.MethodSpec] = caps.NO_RULES,
) -> tuple[Negotiated, str | None]:
    """The server's side of a stateless request: the agreement it is served under and its own log
    level. RemoteError: -32602 or -32022 for its `_meta`, -32601 for a method this server lacks."""
    meta = read_request_meta(params, versions)
    caps.inbound_rule(method, caps.Role.SERVER, False, capabilities, True, extension_rules)
    client_info, client_capabilities = meta.client_info, meta.client_capabilities
    agreed = Negotiated(meta.version, client_info, client_capabilities, info, capabilities, instructions)
    return agreed, meta.log_level


def _newest(supported: tuple[str, ...]) -> str:
    stateless = [v for v in supported if is_stateless(v)]
    return stateless[-1] if stateless else supported[-1]


def request_meta(version: str, capabilities: JSON, info: JSON, log_level: str | None = None) -> JSON:
    """The client's side: the protocol fields for one request's `_meta`."""
    meta: JSON = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: declared_at(version, capabilities)}
    meta[CLIENT_INFO] = info
    if log_level is not None:
        meta[LOG_LEVEL] = log_level
    return meta


def with_request_meta(
    params: JSON, version: str, capabilities: JSON, info: JSON, log_level: str | None
) -> JSON:
    """The client's side: `params` with the protocol fields added to its `_meta` (a copy). Extensions
    the params' own `_meta` declares for this request alone are kept (a per-request opt-in)."""
    meta = params.get("_meta")
    own = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    extra = own.get("extensions") if isinstance(own, dict) else None
    if isinstance(extra, dict) and extra:
        extensions = capabilities.get("extensions")
        merged = {**(extensions if isinstance(extensions, dict) else {}), **extra}
        capabilities = {**capabilities, "extensions": merged}
    fields = request_meta(version, capabilities, info, log_level)
    return {**params, "_meta": {**meta, **fields} if isinstance(meta, dict) else fields}


def subscription_notification(method: str, params: JSON | None, subscription_id: Any, own: JSON) -> JSON:
    """A notification on a subscriptions/listen stream, tagged with that subscription's id
    (basic "_meta": the server MUST include it on every such notification)."""
    caps.outbound_rule(method, caps.Role.SERVER, True, own, {}, stateless=True)
    meta = {SUBSCRIPTION_ID: subscription_id}
    return {"jsonrpc": "2.0", "method": method, "params": {**(params or {}), "_meta": meta}}


def finish_result(method: str, result: JSON, server_info: JSON | None) -> JSON:
    """A stateless result as sent: `resultType` present (basic "Responses") and the server named in `_meta`.

    The result is copied, never changed in place: handlers may hand back cached results.
    LocalError (-32603) when `method` may not answer input_required.
    """
    kind = result.get("resultType", "complete")
    if kind == "input_required" and method not in ASKS_CLIENT:
        why = f"{method} may not answer input_required (patterns: Multi Round-Trip Requests)"
        raise LocalError(why, INTERNAL_ERROR)
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
