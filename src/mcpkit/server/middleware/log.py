"""`RequestLog`: one structured log record per request (see `mcpkit.server.middleware`)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ...protocol.errors import MCPError
from ...protocol.jsonrpc import JSON
from ...protocol.methods import ITEM_FIELDS, METHODS
from .limits import client_key

if TYPE_CHECKING:
    from ..context import Context
    from .chain import Call

__all__ = ["RequestLog"]


def _subject(method: str, params: JSON) -> str | None:
    """The item a request names (a tool, a prompt, a resource, a task), for the log. The table does
    not know an extension's methods: for those, the first parameter that names an item anywhere."""
    spec = METHODS.get(method)
    fields = ITEM_FIELDS if spec is None else () if spec.item is None else (spec.item,)
    for field in fields:
        value = params.get(field)
        if isinstance(value, str):
            return value
    return None


def _trace_id(meta: JSON) -> str | None:
    """The W3C trace id of the request's `_meta.traceparent` (version-traceid-parentid-flags)."""
    parent = meta.get("traceparent")
    parts = parent.split("-") if isinstance(parent, str) else []
    return parts[1] if len(parts) == 4 and len(parts[1]) == 32 else None


class RequestLog:
    """One record per request on `logger` (default "mcpkit.requests"), at INFO, with the fields in
    `extra`: mcp_method, mcp_name, mcp_outcome ("ok", "error -32602", "input_required", "task"),
    mcp_ms, mcp_client, mcp_session (the HTTP session, else None) and trace_id (from the request's
    `_meta.traceparent`, else None). The message says the same in one line."""

    def __init__(self, logger: logging.Logger | None = None, level: int = logging.INFO) -> None:
        self.logger = logger or logging.getLogger("mcpkit.requests")
        self.level = level

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        start = time.perf_counter()
        outcome = "ok"
        try:
            result = await call_next(params)
            kind = result.get("resultType")
            if kind in ("input_required", "task"):
                outcome = str(kind)
            elif result.get("isError"):
                outcome = "tool error"
            return result
        except MCPError as exc:
            outcome = f"error {exc.code}"
            raise
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            ms = round((time.perf_counter() - start) * 1000, 3)
            name, client = _subject(method, params), client_key(ctx)
            fields = {"mcp_method": method, "mcp_name": name, "mcp_outcome": outcome, "mcp_ms": ms}
            line = f"{method}{f' {name}' if name else ''} -> {outcome} in {ms} ms ({client})"
            where = {"mcp_session": ctx.session_id, "trace_id": _trace_id(ctx.meta)}
            self.logger.log(self.level, line, extra={**fields, "mcp_client": client, **where})
