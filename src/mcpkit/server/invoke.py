"""Calling a user's handler: async functions on the event loop, sync functions on a worker thread."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..runtime.workers import run_in_worker

__all__ = ["invoke"]


async def invoke(fn: Callable[..., Any], kwargs: dict[str, Any], is_async: bool) -> Any:
    if is_async:
        value = await fn(**kwargs)
    else:
        # A blocking handler must not stall the loop; it runs within its session's share of threads.
        value = await run_in_worker(functools.partial(fn, **kwargs))
    if inspect.isawaitable(value):
        value = await value
    return value
