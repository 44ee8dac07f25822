"""The messages many tests write by hand: an `initialize` request (era 2025-11-25 unless told), and the
headers a Streamable HTTP POST carries."""

from __future__ import annotations

import json
from typing import Any

VERSION = "2025-11-25"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize_params(version: str = VERSION, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """The params of an `initialize` request from a client named "t"."""
    return {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "t", "version": "1"},
    }


def initialize(
    version: str = VERSION, rid: int | str = 1, capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An `initialize` request for `version`, with id `rid`."""
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": initialize_params(version, capabilities),
    }


def body(message: dict[str, Any]) -> bytes:
    """`message` as the bytes of a request body."""
    return json.dumps(message).encode()


INITIALIZE = initialize()
