"""The lifecycle as a table, the handshake's messages, and the value both sides end up agreeing on.

Spec: lifecycle "Initialization" and "Version Negotiation" (2024-11-05 .. 2025-11-25). A move the
table has no entry for is illegal, and the error says which role, phase and move failed the lookup.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

from .capabilities import Role
from .errors import INVALID_PARAMS, INVALID_REQUEST, LocalError, RemoteError
from .jsonrpc import JSON
from .versions import STATELESS_VERSIONS, SUPPORTED_VERSIONS, Feature, has, negotiate

__all__ = [
    "ON_RECEIVE",
    "ON_SEND_NOTIFICATION",
    "ON_SEND_REQUEST",
    "TRANSITIONS",
    "Negotiated",
    "Phase",
    "Trigger",
    "accept_initialize",
    "advance",
    "check_initialize_result",
    "initialize_params",
]


class Phase(enum.Enum):
    NEW = "not initialized"
    INITIALIZING = "waiting for its initialize result"
    READY = "initialized"

    # Members are singletons, so identity hashing is correct; Enum's own hashes the name in Python,
    # which tripled the cost of the TRANSITIONS lookup every message makes.
    __hash__ = object.__hash__


class Trigger(enum.Enum):
    """A move that may change the phase: this side's call, or a message from the peer."""

    SEND_INITIALIZE = "send initialize"
    SEND_PROBE = "send a stateless probe (server/discover)"
    ADOPT_STATELESS = "adopt a 2026-07-28 agreement"
    ASSUME_VERSION = "assume a version its transport agreed without initialize"
    ABANDON_INITIALIZE = "stop waiting for the initialize result"
    SEND_REQUEST = "send a request"
    SEND_NOTIFICATION = "send a notification"
    SEND_EARLY = "send a message allowed before initialization (ping, log, cancel, progress)"
    RECEIVE_INITIALIZE = "receive initialize"
    INITIALIZE_RESULT = "receive the initialize result"
    INITIALIZE_FAILED = "receive an initialize error"
    RECEIVE_REQUEST = "receive a request"
    RECEIVE_EARLY = "receive a request allowed before initialization (initialize, ping)"

    __hash__ = object.__hash__  # as for Phase

    @property
    def remote(self) -> bool:
        """Whether the peer's message caused it (a failed lookup is then the peer's fault)."""
        return self in _PEER_MOVES


C, S = Role.CLIENT, Role.SERVER
T, P = Trigger, Phase
_PEER_MOVES: Final = frozenset(
    {T.RECEIVE_INITIALIZE, T.INITIALIZE_RESULT, T.INITIALIZE_FAILED, T.RECEIVE_REQUEST, T.RECEIVE_EARLY}
)

# (role, phase, trigger) -> next phase. lifecycle "Initialization": the client sends initialize first and
# nothing but pings (and logs, from the server) flows until it has been answered; 2026-07-28 clients
# skip the handshake by adopting a discovered (or pinned) agreement; a server whose transport serves
# without sessions (sessionless HTTP) assumes the version the request names.
TRANSITIONS: Final[dict[tuple[Role, Phase, Trigger], Phase]] = {
    (C, P.NEW, T.SEND_INITIALIZE): P.INITIALIZING,
    (C, P.NEW, T.SEND_PROBE): P.NEW,
    (C, P.NEW, T.ADOPT_STATELESS): P.READY,
    (C, P.INITIALIZING, T.INITIALIZE_RESULT): P.READY,
    (C, P.INITIALIZING, T.INITIALIZE_FAILED): P.NEW,
    (C, P.INITIALIZING, T.ABANDON_INITIALIZE): P.NEW,
    (S, P.NEW, T.RECEIVE_INITIALIZE): P.READY,
    (S, P.NEW, T.ASSUME_VERSION): P.READY,
    **{(role, P.READY, t): P.READY for role in Role for t in (T.SEND_REQUEST, T.SEND_NOTIFICATION)},
    **{(role, P.READY, T.RECEIVE_REQUEST): P.READY for role in Role},
    **{(role, phase, t): phase for role in Role for phase in Phase for t in (T.SEND_EARLY, T.RECEIVE_EARLY)},
}

# The move a message makes, indexed by whether its method may come before initialization
# (methods.MethodSpec.before_ready).
ON_RECEIVE: Final = (T.RECEIVE_REQUEST, T.RECEIVE_EARLY)
ON_SEND_REQUEST: Final = (T.SEND_REQUEST, T.SEND_EARLY)
ON_SEND_NOTIFICATION: Final = (T.SEND_NOTIFICATION, T.SEND_EARLY)


def advance(role: Role, phase: Phase, trigger: Trigger, subject: str) -> Phase:
    """The phase after `trigger`; RemoteError (-32600) for the peer's illegal move, LocalError for ours.

    `subject` (usually the method) only names the move in the error."""
    after = TRANSITIONS.get((role, phase, trigger))
    if after is not None:
        return after
    why = f"{subject!r}: a {role.value} cannot {trigger.value} while {phase.value}"
    if trigger.remote:
        raise RemoteError(INVALID_REQUEST, f"Invalid Request: {why}")
    raise LocalError(why)


@dataclass(frozen=True, slots=True)
class Negotiated:
    version: str
    client_info: JSON
    client_capabilities: JSON
    server_info: JSON
    server_capabilities: JSON
    instructions: str | None = None
    # Whether this agreement is of the stateless era (2026-07-28): per-request `_meta`, no session.
    # Derived from `version` once, since every message served under the agreement asks.
    stateless: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stateless", self.version in STATELESS_VERSIONS)

    def capabilities_of(self, role: Role) -> JSON:
        return self.client_capabilities if role is Role.CLIENT else self.server_capabilities


def declared_at(version: str, capabilities: JSON) -> JSON:
    """The capabilities as declared at `version`: `tasks` only where the tasks utility exists (2025-11-25)."""
    if "tasks" in capabilities and not has(version, Feature.TASKS):
        return {k: v for k, v in capabilities.items() if k != "tasks"}
    return capabilities


def initialize_params(version: str, capabilities: JSON, info: JSON) -> JSON:
    return {
        "protocolVersion": version,
        "capabilities": declared_at(version, capabilities),
        "clientInfo": info,
    }


def accept_initialize(
    params: JSON,
    supported: tuple[str, ...],
    server_info: JSON,
    server_capabilities: JSON,
    instructions: str | None,
) -> tuple[Negotiated, JSON]:
    """The server's side: validate the client's `initialize` params; return the agreement and the result."""
    client_caps = params.get("capabilities")
    client_info = params.get("clientInfo")
    if not isinstance(params.get("protocolVersion"), str):
        raise RemoteError(INVALID_PARAMS, "Invalid params: initialize needs a string protocolVersion")
    if not isinstance(client_caps, dict):
        raise RemoteError(INVALID_PARAMS, "Invalid params: initialize needs a capabilities object")
    if not isinstance(client_info, dict) or not isinstance(client_info.get("name"), str):
        raise RemoteError(INVALID_PARAMS, "Invalid params: initialize needs clientInfo with a name")
    version = negotiate(params["protocolVersion"], supported)
    server_capabilities = declared_at(version, server_capabilities)
    result: JSON = {
        "protocolVersion": version,
        "capabilities": server_capabilities,
        "serverInfo": server_info,
    }
    if instructions:
        result["instructions"] = instructions
    negotiated = Negotiated(version, client_info, client_caps, server_info, server_capabilities, instructions)
    return negotiated, result


def check_initialize_result(
    result: JSON,
    client_info: JSON,
    client_capabilities: JSON,
    supported: tuple[str, ...] = SUPPORTED_VERSIONS,
) -> Negotiated:
    """The client's side: accept the server's answer, or refuse a version this client does not speak."""
    version = result.get("protocolVersion")
    if not isinstance(version, str) or version not in supported:
        raise RemoteError(
            INVALID_REQUEST,
            f"The server chose protocol version {version!r}, which this client does not support "
            f"(it supports {', '.join(supported)})",
        )
    caps = result.get("capabilities")
    info = result.get("serverInfo")
    if not isinstance(caps, dict) or not isinstance(info, dict):
        raise RemoteError(INVALID_REQUEST, "The initialize result lacks capabilities or serverInfo")
    instructions = result.get("instructions")
    return Negotiated(
        version,
        client_info,
        client_capabilities,
        info,
        caps,
        instructions if isinstance(instructions, str) else None,
    )
