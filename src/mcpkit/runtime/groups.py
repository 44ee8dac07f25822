"""Task groups wrap errors in exception groups; callers of a connection want the error itself."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["single_error"]


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
