"""What the Streamable HTTP client keeps for 2026-07-28 requests: tool headers learnt, open streams.

Spec 2026-07-28 transports "Streamable HTTP": "Request Metadata" (headers from the body, and from
the `x-mcp-header` annotations of the tools a tools/list result lists; a tool with an invalid
annotation is dropped from that result, with a warning), "Cancellation" (closing a request's
response stream cancels it: no notifications/cancelled is POSTed), "Backward Compatibility" (a 4xx
with a JSON-RPC error body is the request's answer, so the era probe can read its code).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import orjson

from ...protocol.http_request_headers import ToolHeaders, request_headers, screen_tools
from ...protocol.jsonrpc import JSON, encode, error_message
from ...protocol.utilities import read_cancel

__all__ = ["StatelessTraffic", "error_answer"]

log = logging.getLogger("mcpkit")


class StatelessTraffic:
    """The stateless era's share of one HTTP client: mirrored tool parameters and open response streams."""

    def __init__(self) -> None:
        self.mirrored: dict[str, ToolHeaders] = {}
        self._open: dict[Any, anyio.CancelScope] = {}
        self._listings: set[Any] = set()  # ids of tools/list requests whose results are screened

    def headers(self, message: JSON) -> dict[str, str]:
        """The metadata headers of a 2026-07-28 request; empty for anything else."""
        if "id" not in message:
            return {}
        headers = request_headers(message, self.mirrored)
        if headers and message.get("method") == "tools/list":
            self._listings.add(message["id"])
        return headers

    @contextmanager
    def stream(self, rid: Any) -> Iterator[anyio.CancelScope]:
        """Scope one request's POST; `cancel` closes it."""
        scope = anyio.CancelScope()
        self._open[rid] = scope
        try:
            with scope:
                yield scope
        finally:
            self._open.pop(rid, None)
            self._listings.discard(rid)

    def cancel(self, message: JSON) -> bool:
        """notifications/cancelled for an open 2026-07-28 request: close its stream instead; True if done."""
        named = read_cancel(message.get("params"))
        if message.get("method") != "notifications/cancelled" or named is None:
            return False
        scope = self._open.get(named[0])
        if scope is None:
            return False
        scope.cancel()
        return True

    def screen(self, message: JSON) -> JSON:
        """Learn the tools a tools/list result lists; drop those with an invalid `x-mcp-header`."""
        if not self._listings:
            return message
        result = message.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list) or message.get("id") not in self._listings:
            return message
        assert isinstance(result, dict)
        kept, mirrored, dropped = screen_tools(tools)
        for tool in tools:  # a tool listed again may have lost its annotations
            if isinstance(tool, dict):
                self.mirrored.pop(str(tool.get("name")), None)
        self.mirrored.update(mirrored)
        for why in dropped:
            log.warning("tools/list: dropping %s", why)
        if not dropped:
            return message
        return {**message, "result": {**result, "tools": kept}}


def error_answer(message: JSON, body: bytes) -> bytes | None:
    """The error response a refused request gets when the refusal's body is a JSON-RPC error.

    Its code and data stay intact; the id is the request's (a server may answer with a null id).
    """
    try:
        refusal = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    error = refusal.get("error") if isinstance(refusal, dict) else None
    rid = message.get("id")
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return None
    if not isinstance(rid, str | int):
        return None
    return encode(error_message(rid, error))
