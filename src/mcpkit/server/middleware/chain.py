"""Middleware: code around every request a server handles, or around some methods only. A middleware
is `async def mw(ctx, method, params, call_next) -> result`: it may look at or change the params, call
`call_next(params)` (the next middleware, and at the end the handler), change or replace the result,
time it, or answer without calling on (short-circuit) or raise an MCPError to refuse. The first added
is the outermost. A server with none pays one truth test per request.

    server.middleware.add(RequestLog())
    server.middleware.add(RateLimit(per_second=5, burst=10), methods={"tools/call"})
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from functools import partial
from typing import TYPE_CHECKING

from ...protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from ..context import Context

__all__ = ["Call", "Chain", "Middleware"]

Call = Callable[[JSON], Awaitable[JSON]]
Middleware = Callable[["Context", str, JSON, Call], Awaitable[JSON]]


class Chain:
    """The middleware of one server, in the order added, each with the methods it applies to."""

    def __init__(self) -> None:
        self.entries: list[tuple[Middleware, frozenset[str] | None]] = []  # truthy: any at all
        self._by_method: dict[str, tuple[Middleware, ...]] = {}

    def __bool__(self) -> bool:
        return bool(self.entries)

    def add(self, middleware: Middleware, *, methods: Collection[str] | None = None) -> Middleware:
        """Run `middleware` around every request, or around `methods` only; returns it (a decorator)."""
        self.entries.append((middleware, frozenset(methods) if methods is not None else None))
        self._by_method.clear()
        return middleware

    def on(self, *methods: str) -> Callable[[Middleware], Middleware]:
        """`@server.middleware.on("tools/call")`: the decorated middleware for those methods only."""
        return partial(self.add, methods=methods)

    def for_method(self, method: str) -> tuple[Middleware, ...]:
        found = self._by_method.get(method)
        if found is None:
            found = tuple(mw for mw, only in self.entries if only is None or method in only)
            self._by_method[method] = found
        return found

    async def run(self, ctx: Context, method: str, params: JSON, handler: Call) -> JSON:
        call = handler
        for middleware in reversed(self.for_method(method)):
            call = _bound(middleware, ctx, method, call)
        return await call(params)


def _bound(middleware: Middleware, ctx: Context, method: str, call_next: Call) -> Call:
    async def call(params: JSON) -> JSON:
        return await middleware(ctx, method, params, call_next)

    return call
