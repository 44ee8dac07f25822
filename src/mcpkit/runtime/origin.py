"""Where an inbound message came from, as far as its transport can tell, for the handler it starts.

A transport that knows more than the bytes (Streamable HTTP: the request's headers, the access token
`mcpkit.auth.protect()` verified, the session id) hands it over with each message; the Session's reader
puts it in `RECEIVED_FROM` before it starts the message's handler, whose task inherits a copy of the
context. Over stdio nothing is known and it stays None. The Streamable HTTP client knows one thing: which
of its own requests a server's request came with (on that request's response stream).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..protocol.jsonrpc import RequestId

if TYPE_CHECKING:  # only a protected HTTP server has tokens; stdio never imports the auth rules
    from ..protocol.resource_auth import AccessToken

__all__ = ["RECEIVED_FROM", "Origin"]


@dataclass(frozen=True, slots=True)
class Origin:
    """What the transport knew of one inbound message.

    `headers`: the HTTP request's headers, names lower-cased. `auth`: the verified access token, when
    the server is protected. `session_id`: the Streamable HTTP session it belongs to, if any.
    `answering`: the id of our request whose response stream carried it (a client's view), if any.
    `caller`: who sent it as far as the server can tell without a token (the HTTP app's `session_key`
    identity, else the peer's address), e.g. to keep anonymous callers' tasks apart.
    """

    headers: Mapping[str, str] = field(default_factory=dict)
    auth: AccessToken | None = None
    session_id: str | None = None
    answering: RequestId | None = None
    caller: str | None = None

    @property
    def principal(self) -> str | None:
        """Whose access token authorized the request (AccessToken.principal), or None."""
        return self.auth.principal if self.auth is not None else None


RECEIVED_FROM: ContextVar[Origin | None] = ContextVar("mcpkit_received_from", default=None)
