"""Three middlewares a service wants on day one (server/middleware.py says how middleware works):
`RequestLog` (one structured log record per request), `RateLimit` (a token bucket per client) and
`Timing` (counts and durations per method, for a metrics system)."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.errors import SERVER_BUSY, MCPError
from ..protocol.methods import ITEM_FIELDS, METHODS

if TYPE_CHECKING:
    from .context import Context
    from .middleware import Call

__all__ = ["MethodStats", "RateLimit", "RequestLog", "Timing", "client_key"]

JSON = dict[str, Any]


def client_key(ctx: Context) -> str:
    """Who is asking: the access token's principal, else the HTTP session, else the client's name."""
    auth = ctx.auth
    if auth is not None:
        return f"principal:{auth.principal}"
    if ctx.session_id is not None:
        return f"session:{ctx.session_id}"
    return f"client:{ctx.client_info.get('name', '?')}"


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


class RateLimit:
    """At most `burst` requests at once, refilled at `per_second`, per client (`key`, default
    `client_key`); past it: -32010 with `data.retryAfterMs`. At most `max_clients` buckets are kept
    (the least recently seen go first)."""

    def __init__(
        self,
        per_second: float,
        burst: int,
        *,
        key: Callable[[Context], str] = client_key,
        max_clients: int = 10_000,
    ) -> None:
        if per_second <= 0 or burst < 1 or max_clients < 1:
            raise ValueError("per_second, burst and max_clients must be positive")
        self.per_second, self.burst, self.key, self.max_clients = per_second, burst, key, max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        who, now = self.key(ctx), time.monotonic()
        tokens, when = self._buckets.pop(who, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - when) * self.per_second)
        if tokens < 1:
            self._buckets[who] = (tokens, now)
            wait_ms = int((1 - tokens) / self.per_second * 1000) + 1
            raise MCPError(
                SERVER_BUSY, f"Too many requests: try again in {wait_ms} ms", {"retryAfterMs": wait_ms}
            )
        self._buckets[who] = (tokens - 1, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)
        return await call_next(params)


@dataclass(slots=True)
class MethodStats:
    count: int = 0
    errors: int = 0
    total_s: float = 0.0
    max_s: float = 0.0


class Timing:
    """Counts, errors and durations per method in `stats`; `on_request(method, seconds, ok)` (optional)
    sees each one, for a metrics client (a Prometheus histogram, a StatsD timer)."""

    def __init__(self, on_request: Callable[[str, float, bool], None] | None = None) -> None:
        self.stats: dict[str, MethodStats] = {}
        self.on_request = on_request

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        start, ok = time.perf_counter(), False
        try:
            result = await call_next(params)
            ok = True
            return result
        finally:
            seconds = time.perf_counter() - start
            stats = self.stats.setdefault(method, MethodStats())
            stats.count += 1
            stats.errors += 0 if ok else 1
            stats.total_s += seconds
            stats.max_s = max(stats.max_s, seconds)
            if self.on_request is not None:
                self.on_request(method, seconds, ok)
