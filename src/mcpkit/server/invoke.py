"""Calling a user's handler: async functions on the event loop, sync functions on a worker thread."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import anyio

__all__ = ["invoke"]


async def invoke(fn: Callable[..., Any], kwargs: dict[str, Any], is_async: bool) -> Any:
    if is_async:
        value = await fn(**kwargs)
    else:
        # A blocking handler must not stall the loop; on cancellation the thread is abandoned.
        value = await anyio.to_thread.run_sync(functools.partial(fn, **kwargs), abandon_on_cancel=True)
    if inspect.isawaitable(value):
        value = await value
    return value
