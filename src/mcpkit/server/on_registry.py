"""A Server attribute kept on its Registry, where the handlers read it (`server.page_size = 10`)."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast, overload

__all__ = ["OnRegistry"]

T = TypeVar("T")


class OnRegistry(Generic[T]):
    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, server: None, owner: type) -> OnRegistry[T]: ...
    @overload
    def __get__(self, server: Any, owner: type) -> T: ...
    def __get__(self, server: Any, owner: type) -> T | OnRegistry[T]:
        return self if server is None else cast(T, getattr(server.registry, self.name))

    def __set__(self, server: Any, value: T) -> None:
        setattr(server.registry, self.name, value)
