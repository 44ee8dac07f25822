"""The handshake: what each side says in `initialize`, and the value both end up agreeing on.

Spec: lifecycle "Initialization" and "Version Negotiation" (2024-11-05 .. 2025-11-25).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from .errors import INVALID_PARAMS, INVALID_REQUEST, RemoteError
from .versions import SUPPORTED_VERSIONS, negotiate

__all__ = ["Negotiated", "Phase", "accept_initialize", "check_initialize_result", "initialize_params"]

JSON = dict[str, Any]


class Phase(enum.Enum):
    NEW = "awaiting initialize"
    INITIALIZING = "initialize sent, awaiting its result"
    READY = "ready"


@dataclass(frozen=True, slots=True)
class Negotiated:
    version: str
    client_info: JSON
    client_capabilities: JSON
    server_info: JSON
    server_capabilities: JSON
    instructions: str | None = None


def initialize_params(version: str, capabilities: JSON, info: JSON) -> JSON:
    return {"protocolVersion": version, "capabilities": capabilities, "clientInfo": info}


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
