"""Calling a user's handler: async functions on the event loop, sync functions on a worker thread."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from ..runtime.thread_share import run_in_thread
from .depends import Dependencies, resolve
from .request import RequestContext

__all__ = ["invoke"]

_PLAIN = frozenset({str, int, float, bool, dict, list, tuple, type(None)})  # never awaitable


async def invoke(
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    is_async: bool,
    dependencies: Dependencies,
    ctx: RequestContext,
) -> Any:
    """`fn(**kwargs)`, with its injected parameters (`dependencies`) made for `ctx` and closed after."""
    if dependencies:
        async with AsyncExitStack() as stack:
            kwargs.update(await resolve(dependencies, ctx, stack))
            return await _call(fn, kwargs, is_async)
    return await _call(fn, kwargs, is_async)


async def _call(fn: Callable[..., Any], kwargs: dict[str, Any], is_async: bool) -> Any:
    if is_async:
        value = await fn(**kwargs)
    else:
        # A blocking handler must not stall the loop; it runs within its session's share of threads.
        value = await run_in_thread(functools.partial(fn, **kwargs))
    if type(value) not in _PLAIN and inspect.isawaitable(value):
        value = await value
    return value
