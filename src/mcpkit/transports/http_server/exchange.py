"""One HTTP request to the Streamable HTTP server and the response being written for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...protocol.jsonrpc import Message
from ...protocol.versions import V2025_03_26
from ...runtime.origin import Origin
from .asgi import Receive, Send

if TYPE_CHECKING:
    from ...protocol.resource_auth import AccessToken

__all__ = ["Exchange", "Headers"]

Headers = list[tuple[bytes, bytes]]


@dataclass(slots=True)
class Exchange:
    """What every step of answering one request needs, filled in as it becomes known.

    `headers` are lower-cased (the last copy of a repeated field wins; `repeated` names such fields).
    A POST's `body` and `message` are set once read, and `version` once its era is known: the version
    the request speaks (the header's, the session's, or the spec's 2025-03-26 default).
    `response_headers` go on whichever response answers it (a new session's Mcp-Session-Id).
    """

    headers: dict[str, str]
    receive: Receive
    send: Send
    repeated: frozenset[str] = frozenset()
    client: str | None = None  # who sent it, when the server's session_key can tell
    peer: str | None = None  # the address it came from, when the ASGI server says
    body: bytes = b""
    decoded: dict[str, Any] | None = None  # the body parsed, handed on so the session does not parse it again
    message: Message | None = None
    version: str = V2025_03_26
    response_headers: Headers = field(default_factory=list)
    auth: AccessToken | None = None  # what mcpkit.auth.protect() verified, on a protected server

    @property
    def principal(self) -> str | None:
        """Whose access token authorized the request (None on an unprotected server)."""
        return self.auth.principal if self.auth is not None else None

    @property
    def inbound(self) -> bytes | dict[str, Any]:
        """What the session is handed: the decoded body, else (not parsed here) the bytes."""
        return self.decoded if self.decoded is not None else self.body

    def origin(self, session_id: str | None) -> Origin:
        """What a handler may know of the request that carried its message."""
        caller = f"client:{self.client}" if self.client is not None else self.peer and f"address:{self.peer}"
        return Origin(self.headers, self.auth, session_id, caller=caller)
