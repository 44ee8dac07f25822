"""OnRegistry: a Server attribute kept on its Registry, where the handlers read it."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar, cast, overload

from .registry import Registry

__all__ = ["OnRegistry"]

T = TypeVar("T")


class HasRegistry(Protocol):
    registry: Registry


class OnRegistry(Generic[T]):
    """`server.x` reads and sets `server.registry.x`."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, server: None, owner: type) -> OnRegistry[T]: ...
    @overload
    def __get__(self, server: HasRegistry, owner: type) -> T: ...
    def __get__(self, server: HasRegistry | None, owner: type) -> T | OnRegistry[T]:
        return self if server is None else cast(T, getattr(server.registry, self.name))

    def __set__(self, server: HasRegistry, value: T) -> None:
        setattr(server.registry, self.name, value)
