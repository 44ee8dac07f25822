"""A server's lifespan: what it opens once before it serves anyone and closes after the last (a database
pool, an HTTP client), reachable from every handler as `ctx.lifespan`.

`Server(lifespan=fn)`: `fn(server)` is an async context manager; the value it yields is the lifespan's.
It is entered by whatever serves first (the Streamable HTTP app at its startup, `Server.run()`, or the
first `serve()`), once however many sessions or transports share the server, and left when the last
of them is done.
"""

from __future__ import annotations

import collections.abc
import contextlib
import typing
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, get_args, get_origin

import anyio

from ..protocol.errors import LocalError

__all__ = ["Lifespan", "LifespanFactory", "yielded_type"]

LifespanFactory = Callable[[Any], AbstractAsyncContextManager[Any]]
_YIELDING = (
    collections.abc.AsyncIterator,
    collections.abc.AsyncGenerator,
    contextlib.AbstractAsyncContextManager,
)


def yielded_type(factory: LifespanFactory | None) -> type | None:
    """The class a lifespan yields, from its annotation (`-> AsyncIterator[AppState]`), when it is one
    of the application's own: a handler parameter of that type receives the value (depends.py). A
    builtin (`dict`, `str`) or no annotation: None, since such a type names arguments too."""
    try:
        returns = typing.get_type_hints(factory).get("return") if factory is not None else None
    except (NameError, TypeError):
        return None
    if get_origin(returns) in _YIELDING and get_args(returns):
        value = get_args(returns)[0]
        if isinstance(value, type) and value.__module__ != "builtins":
            return value
    return None


class Lifespan:
    def __init__(self, factory: LifespanFactory | None, server: object) -> None:
        self._factory, self._server = factory, server
        self.value_type = yielded_type(factory)  # what handlers may take by type
        self._users = 0
        self._stack: AsyncExitStack | None = None
        self._ready: anyio.Event | None = None
        self._value: Any = None
        self._failure: BaseException | None = None

    @property
    def value(self) -> Any:
        """What the lifespan yielded; LocalError outside it (or when the server has none)."""
        if self._factory is None:
            raise LocalError("this Server was made without a lifespan (Server(lifespan=...))")
        if self._ready is None or not self._ready.is_set() or self._failure is not None:
            raise LocalError("the server's lifespan is not running")
        return self._value

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold the lifespan open for the block: the first holder enters it, the last leaves it."""
        if self._factory is None:
            yield
            return
        self._users += 1
        try:
            if self._users == 1:
                await self._enter()
            else:
                assert self._ready is not None
                await self._ready.wait()
            if self._failure is not None:
                raise LocalError(f"the server's lifespan failed to start: {self._failure}")
            yield
        finally:
            self._users -= 1
            if self._users == 0:
                await self._leave()

    async def _enter(self) -> None:
        assert self._factory is not None
        self._ready, self._failure = anyio.Event(), None
        stack = AsyncExitStack()
        try:
            self._value = await stack.enter_async_context(self._factory(self._server))
            self._stack = stack
        except Exception as exc:
            self._failure = exc
            raise
        finally:
            self._ready.set()

    async def _leave(self) -> None:
        stack, self._stack, self._value, self._ready = self._stack, None, None, None
        if stack is not None:
            with anyio.CancelScope(shield=True):
                await stack.aclose()
