"""Where the limit middlewares (`RateLimit`, `ConcurrencyLimit` in limits.py) keep their counts: one
interface, with this process's memory behind it (`MemoryLimits`) or Redis shared by every worker of a
cluster (`mcpkit.cluster.RedisLimits`, from `RedisBackplane.limits()`), chosen where the server is built.
Also what the limits share: whose count a request goes to, and how a refusal reads.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Protocol

from ...protocol.errors import SERVER_BUSY, MCPError
from ...protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["Key", "LimitStore", "MemoryLimits", "busy", "limit_key", "tenant_key"]

Key = Callable[["Context"], "str | None"]  # whose count a request goes to; None: not limited by this one


class LimitStore(Protocol):
    """Token buckets and concurrency counts, by key."""

    async def take(self, key: str, per_second: float, burst: int) -> float:
        """Take one token from `key`'s bucket (`burst` tokens when new, refilled at `per_second`): 0.0
        when one was taken, else the seconds until one will be there (nothing taken)."""
        ...

    async def enter(self, key: str, cap: int) -> str | None:
        """Hold one of `key`'s `cap` slots: a ticket for `leave`, or None when all are held."""
        ...

    async def leave(self, key: str, ticket: str) -> None:
        """Give back the slot `ticket` holds."""
        ...


class MemoryLimits:
    """A LimitStore in this process: enough for one process, not for several workers behind one URL
    (each would grant the whole rate). At most `max_keys` buckets are kept, the least recently used
    dropped first (a dropped bucket is full again); slots are counted while held."""

    def __init__(self, max_keys: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be positive")
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)
        self._held: dict[str, int] = {}
        self._tickets = itertools.count()

    async def take(self, key: str, per_second: float, burst: int) -> float:
        now = self._clock()
        tokens, when = self._buckets.pop(key, (float(burst), now))
        tokens = min(float(burst), tokens + (now - when) * per_second)
        taken = tokens >= 1
        self._buckets[key] = (tokens - 1 if taken else tokens, now)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return 0.0 if taken else (1 - tokens) / per_second

    async def enter(self, key: str, cap: int) -> str | None:
        held = self._held.get(key, 0)
        if held >= cap:
            return None
        self._held[key] = held + 1
        return str(next(self._tickets))

    async def leave(self, key: str, ticket: str) -> None:
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)


def tenant_key(claim: str = "tenant") -> Key:
    """A key counting a tenant's requests together: the access token's `claim` (an API key's `claims`,
    a JWT's claim). A request without it is not counted by this limit (stack another limit for those)."""

    def key(ctx: Context) -> str | None:
        auth = ctx.auth
        value = auth.claims.get(claim) if auth is not None else None
        return f"tenant:{value}" if isinstance(value, str) and value else None

    return key


def limit_key(
    who: str | None, method: str, params: JSON, per_tool: bool, tools: Collection[str] | None
) -> str | None:
    """The count a request goes to: `who`'s, or `who`'s for the called tool (`per_tool`); None when the
    limit is only for `tools` and this request calls none of them."""
    if who is None or (tools is None and not per_tool):
        return who
    name = params.get("name") if method == "tools/call" else None
    if not isinstance(name, str) or (tools is not None and name not in tools):
        return None if tools is not None else who
    return f"{who}|tool:{name}" if per_tool else who


def busy(message: str, wait_ms: int, **data: Any) -> MCPError:
    """The refusal of a request past a limit: -32010 with `data.retryAfterMs` (429 with Retry-After over
    2026-07-28 HTTP)."""
    return MCPError(SERVER_BUSY, f"{message}: try again in {wait_ms} ms", {"retryAfterMs": wait_ms, **data})
