"""Middleware: what runs around each request (`chain.py` says how: `async def mw(ctx, method, params,
call_next) -> result`, added with `server.middleware.add(mw)`), and the middlewares a service wants on day
one, each in its own module:

- `log.py`: `RequestLog`, one structured log record per request;
- `limits.py`: `RateLimit` (a token bucket per client, tool or tenant) and `ConcurrencyLimit`;
- `limit_store.py`: where those keep their counts (`MemoryLimits`; a cluster's in Redis), `tenant_key`;
- `timing.py`: `Timing`, counts and durations per method.

The middlewares are imported on first use, so a server with none loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports
from .chain import Call, Chain, Middleware

__all__ = [
    "Call",
    "Chain",
    "ConcurrencyLimit",
    "MemoryLimits",
    "MethodStats",
    "Middleware",
    "RateLimit",
    "RequestLog",
    "Timing",
    "client_key",
    "tenant_key",
]

_EXPORTS = {
    "ConcurrencyLimit": "mcpkit.server.middleware.limits",
    "RateLimit": "mcpkit.server.middleware.limits",
    "client_key": "mcpkit.server.middleware.limits",
    "MemoryLimits": "mcpkit.server.middleware.limit_store",
    "tenant_key": "mcpkit.server.middleware.limit_store",
    "MethodStats": "mcpkit.server.middleware.timing",
    "Timing": "mcpkit.server.middleware.timing",
    "RequestLog": "mcpkit.server.middleware.log",
}

if TYPE_CHECKING:
    from .limit_store import MemoryLimits, tenant_key
    from .limits import ConcurrencyLimit, RateLimit, client_key
    from .log import RequestLog
    from .timing import MethodStats, Timing

__getattr__ = lazy_exports(__name__, _EXPORTS)
