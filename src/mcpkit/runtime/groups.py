"""Task groups wrap errors in exception groups; callers of a connection want the error itself.

And a cancellation that reaches a task group from its body must leave it: see `CallerCancellation`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio

__all__ = ["CallerCancellation", "single_error"]


@contextmanager
def single_error() -> Iterator[None]:
    """Re-raise the only exception of an exception group (nested groups too) as itself."""
    try:
        yield
    except BaseExceptionGroup as group:
        inner: BaseException = group
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        if inner is group:
            raise
        raise inner from None


class CallerCancellation:
    """Notes the cancellation that leaves a context manager's body, to raise it again if a task group
    around the body swallowed it on the way out.

    anyio (4.16, asyncio) can: a child task's cancel scope, cancelled while the group is being
    cancelled, hands its count of pending uncancels to the group's scope, whose host is the caller's
    task; the caller's task is then uncancelled once too often and the group's exit returns normally.
    `asyncio.timeout()` never fires and the code after the caller's block runs. So: body inside
    `noting()`, and `reraise()` after the task group.
    """

    def __init__(self) -> None:
        self.exc: BaseException | None = None

    @contextmanager
    def noting(self) -> Iterator[None]:
        try:
            yield
        except anyio.get_cancelled_exc_class() as exc:
            self.exc = exc
            raise

    def reraise(self) -> None:
        """Raise the noted cancellation; reached only when something swallowed it."""
        if self.exc is not None:
            exc, self.exc = self.exc, None
            raise exc
