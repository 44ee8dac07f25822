"""One HTTP request to the Streamable HTTP server and the response being written for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...protocol.jsonrpc import Message
from ...protocol.versions import V2025_03_26
from ...runtime.origin import Origin
from .asgi import Receive, Send

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
    body: bytes = b""
    message: Message | None = None
    version: str = V2025_03_26
    response_headers: Headers = field(default_factory=list)
    auth: Any = None  # the AccessToken mcpkit.auth.protect() verified for this request, if protected

    def origin(self, session_id: str | None) -> Origin:
        """What a handler may know of the request that carried its message."""
        return Origin(self.headers, self.auth, session_id)
