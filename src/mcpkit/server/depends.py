"""Dependency injection into handlers: a parameter given `Depends(factory)` (as its default, or in
`Annotated[T, Depends(factory)]`) receives what `factory` makes for the call, and a parameter typed as
the value the server's lifespan yields receives that value. Neither is part of the input schema.

    async def open_session(pool: Pool) -> AsyncIterator[DbSession]:   # `Pool`: the lifespan's type
        async with pool.session() as session:
            yield session                                              # closed after the call

    @server.tool()
    async def stock(sku: str, db: DbSession = Depends(open_session)) -> int: ...

A factory is a sync or async function, an async or sync generator function (what it yields is the value;
the rest runs after the call), an @asynccontextmanager / @contextmanager function or a context manager
class (entered, and left after the call, seeing the call's exception if any); a context manager some
other factory returns is the value as is, never entered. A factory's own parameters are injected the
same way: `Context`, the lifespan's type, or further `Depends`. Each factory runs at most once per call
(`cache=False`: once per parameter), in order, and what they opened is closed in reverse order when the
call ends. A sync factory runs on the event loop: keep it quick, and make one that does I/O async.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from typing import Annotated, Any, get_args, get_origin

from .request import RequestContext

__all__ = ["CONTEXT", "Dependencies", "Dependency", "Depends", "injected", "resolve"]

_EMPTY: Any = inspect.Parameter.empty


def Depends(factory: Callable[..., Any], *, cache: bool = True) -> Any:
    """`param: T = Depends(factory)`: the parameter gets what `factory` makes, once per call (typed Any,
    so that it type-checks as the default of a parameter of any type)."""
    return Dependency(factory, cache=cache)


class Dependency:
    """The marker `Depends` makes; `inputs`: the factory's own injected parameters, once planned."""

    __slots__ = ("_make", "cache", "enters", "factory", "inputs")

    def __init__(self, factory: Callable[..., Any], *, cache: bool = True) -> None:
        self.factory, self.cache = factory, cache
        self.inputs: Dependencies | None = None
        self._make: Callable[..., Any] = factory
        if inspect.isasyncgenfunction(factory):
            self._make = asynccontextmanager(factory)
        elif inspect.isgeneratorfunction(factory):
            self._make = contextmanager(factory)
        # Only what the factory opens for this call is entered (and closed after it): a generator, a
        # @(async)contextmanager function or a context manager class, never a value some factory
        # returns that happens to be a context manager (a shared client from the lifespan, say).
        inner = inspect.unwrap(factory)
        self.enters = (
            inspect.isasyncgenfunction(inner)
            or inspect.isgeneratorfunction(inner)
            or (isinstance(factory, type) and any(hasattr(factory, m) for m in ("__aenter__", "__enter__")))
        )

    def __repr__(self) -> str:
        return f"Dependency({getattr(self.factory, '__qualname__', self.factory)!r})"

    async def value(self, ctx: RequestContext, stack: AsyncExitStack, made: dict[Any, Any]) -> Any:
        if self.cache and self.factory in made:
            return made[self.factory]
        kwargs = await resolve(self.inputs or (), ctx, stack, made)
        value = self._make(**kwargs)
        if inspect.isawaitable(value):
            value = await value
        if self.enters and isinstance(value, AbstractAsyncContextManager):
            value = await stack.enter_async_context(value)
        elif self.enters and isinstance(value, AbstractContextManager):
            value = stack.enter_context(value)
        if self.cache:
            made[self.factory] = value
        return value


class _FromContext:
    async def value(self, ctx: RequestContext, stack: AsyncExitStack, made: dict[Any, Any]) -> Any:
        return ctx


class _FromLifespan:
    async def value(self, ctx: RequestContext, stack: AsyncExitStack, made: dict[Any, Any]) -> Any:
        return ctx.lifespan


CONTEXT, LIFESPAN = _FromContext(), _FromLifespan()
Source = Dependency | _FromContext | _FromLifespan
Dependencies = tuple[tuple[str, Source], ...]


def injected(
    param: inspect.Parameter, hint: Any, lifespan_type: type | None, is_context: Callable[[Any], bool]
) -> Source | None:
    """What a parameter is injected from: the Context (`is_context(hint)`), a `Depends` (planned), the
    lifespan's value, or None (an argument)."""
    if is_context(hint):
        return CONTEXT
    marker = param.default if isinstance(param.default, Dependency) else None
    if get_origin(hint) is Annotated:
        marker = next((m for m in get_args(hint)[1:] if isinstance(m, Dependency)), marker)
        hint = get_args(hint)[0]
    if marker is not None:
        _plan(marker, lifespan_type, is_context)
        return marker
    if lifespan_type is not None and isinstance(hint, type) and issubclass(hint, lifespan_type):
        return LIFESPAN
    return None


def _plan(marker: Dependency, lifespan_type: type | None, is_context: Callable[[Any], bool]) -> None:
    if marker.inputs is not None:
        return
    factory = marker.factory
    owner = getattr(factory, "__qualname__", repr(factory))
    target: Any = inspect.getattr_static(factory, "__init__") if isinstance(factory, type) else factory
    target = target if inspect.isroutine(target) else type(target).__call__
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except NameError as exc:
        raise TypeError(f"dependency {owner}: cannot resolve type hints: {exc}") from exc
    inputs: list[tuple[str, Source]] = []
    for param in inspect.signature(factory).parameters.values():
        hint = hints.get(param.name, Any)
        source = injected(param, hint, lifespan_type, is_context)
        if source is not None:
            inputs.append((param.name, source))
        elif param.default is _EMPTY and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"dependency {owner}: parameter {param.name!r} is neither a Context, the lifespan's "
                "type nor Depends(...), and has no default"
            )
    marker.inputs = tuple(inputs)


async def resolve(
    dependencies: Dependencies, ctx: RequestContext, stack: AsyncExitStack, made: dict[Any, Any] | None = None
) -> dict[str, Any]:
    """The values of one call's injected parameters; what they open is closed by `stack`."""
    made = {} if made is None else made
    return {name: await source.value(ctx, stack, made) for name, source in dependencies}
