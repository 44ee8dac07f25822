"""The handshake era's session over Streamable HTTP: the version initialize agreed, a new session after 404.

Spec 2025-11-25 transports "Protocol Version Header" (sent once negotiated) and "Session
Management" 5: a 404 to a request carrying a session id means the session is gone, and the client
MAY start a new one by initializing without it.
"""

from __future__ import annotations

from contextlib import suppress

import httpx

from ...protocol.sse import SSEDecoder
from .failures import read_head

__all__ = ["new_session", "renew_hint"]


def renew_hint(reconnect_on_404: bool) -> str:
    """Why a session that ended with 404 was not replaced."""
    if not reconnect_on_404:
        return "reconnect_on_404 is off, so the client did not start a new one"
    return "starting a new session failed"


async def new_session(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], initialize: bytes, max_message: int
) -> str | None:
    """POST `initialize` again without the old session id; the new session's id, or None when refused.

    The initialize result is read and dropped: the Session already holds the first one.
    """
    headers = {k: v for k, v in headers.items() if k.lower() != "mcp-session-id"}
    async with http.stream("POST", url, content=initialize, headers=headers) as r:
        session_id = r.headers.get("mcp-session-id")
        if r.status_code != 200 or not isinstance(session_id, str) or not session_id:
            return None
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            await _first_event(r, max_message)
        else:
            await read_head(r, max_message)
    return session_id


async def _first_event(response: httpx.Response, max_message: int) -> None:
    decoder = SSEDecoder(max_message)
    async for chunk in response.aiter_bytes():
        with suppress(ValueError):
            if decoder.feed(chunk):
                return
