"""`Timing`: counts and durations per method, for a metrics system."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from ..context import Context
    from .chain import Call

__all__ = ["MethodStats", "Timing"]


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
