"""`RateLimit` (a token bucket per client, tool or tenant) and `ConcurrencyLimit` (requests in flight, the
same ways); their counts live in a `LimitStore` (limit_store.py)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

import anyio

from ...protocol.jsonrpc import JSON
from .limit_store import Key, LimitStore, MemoryLimits, busy, limit_key

if TYPE_CHECKING:
    from ..context import Context
    from .chain import Call

__all__ = ["ConcurrencyLimit", "RateLimit", "client_key"]


def client_key(ctx: Context) -> str:
    """Who is asking: the access token's principal, else the HTTP session, else the client's name."""
    auth = ctx.auth
    if auth is not None:
        return f"principal:{auth.principal}"
    if ctx.session_id is not None:
        return f"session:{ctx.session_id}"
    return f"client:{ctx.client_info.get('name', '?')}"


class RateLimit:
    """At most `burst` requests at once, refilled at `per_second` (a token bucket), per caller: `key`
    (default `client_key`; `limiting.tenant_key(claim)` counts a tenant's together; a key of None leaves
    a request unlimited). `per_tool`: a bucket per caller and tool; `tools`: only calls of these tools
    count. Past it: -32010 with `data.retryAfterMs` (over 2026-07-28 HTTP: 429 with Retry-After).
    `store`: where the buckets are, `MemoryLimits(max_clients)` by default (the least recently seen
    go first); `RedisBackplane.limits()` holds the rate across every worker of a cluster."""

    def __init__(
        self,
        per_second: float,
        burst: int,
        *,
        key: Key = client_key,
        per_tool: bool = False,
        tools: Collection[str] | None = None,
        store: LimitStore | None = None,
        max_clients: int = 10_000,
    ) -> None:
        if per_second <= 0 or burst < 1 or max_clients < 1:
            raise ValueError("per_second, burst and max_clients must be positive")
        self.per_second = per_second
        self.burst = burst
        self.key = key
        self.max_clients = max_clients
        self.per_tool = per_tool
        self.tools = frozenset(tools) if tools is not None else None
        self.store: LimitStore = store if store is not None else MemoryLimits(max_clients)
        self.name = _limit_name(f"rate:{per_second}/{burst}", self.tools)

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        who = limit_key(self.key(ctx), method, params, self.per_tool, self.tools)
        if who is not None:
            wait = await self.store.take(f"{self.name}|{who}", self.per_second, self.burst)
            if wait > 0:
                raise busy("Too many requests", int(wait * 1000) + 1)
        return await call_next(params)


class ConcurrencyLimit:
    """At most `max_in_flight` requests at once per caller (`key`, `per_tool` and `tools` as for
    RateLimit); one more is refused at once: -32010 with `data.maxInFlight` (and `retryAfterMs`
    1000; over 2026-07-28 HTTP: 429). `store`: `MemoryLimits()` by default; `RedisBackplane.limits()`
    counts across every worker of a cluster. A call answered with a task counts until it is answered,
    not while its task runs."""

    def __init__(
        self,
        max_in_flight: int,
        *,
        key: Key = client_key,
        per_tool: bool = False,
        tools: Collection[str] | None = None,
        store: LimitStore | None = None,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be positive")
        self.max_in_flight = max_in_flight
        self.key = key
        self.per_tool = per_tool
        self.tools = frozenset(tools) if tools is not None else None
        self.store: LimitStore = store if store is not None else MemoryLimits()
        self.name = _limit_name(f"inflight:{max_in_flight}", self.tools)

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        who = limit_key(self.key(ctx), method, params, self.per_tool, self.tools)
        if who is None:
            return await call_next(params)
        key, cap = f"{self.name}|{who}", self.max_in_flight
        ticket = await self.store.enter(key, cap)
        if ticket is None:
            raise busy(f"Too many requests in flight (at most {cap})", 1000, maxInFlight=cap)
        try:
            return await call_next(params)
        finally:
            with anyio.CancelScope(shield=True):  # a cancelled request gives its slot back too
                await self.store.leave(key, ticket)


def _limit_name(kind: str, tools: frozenset[str] | None) -> str:
    """What keeps two limits apart in one store: their kind and numbers, and the tools they count (the
    same on every worker, so a cluster's workers share each limit's counts)."""
    return kind if tools is None else f"{kind}:{','.join(sorted(tools))}"
