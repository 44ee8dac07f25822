"""Server attributes kept where the handlers read them: `OnRegistry` on its Registry, `OnServices` in
its Services (`OnPeers`: the Peers there, hearing through the visibility hook, `install`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Generic, Protocol, TypeVar, cast, overload

from .peers import Peers
from .registry import Registry
from .services import Services
from .visibility import Visibility, VisibleFn

__all__ = ["OnPeers", "OnRegistry", "OnServices", "install_visibility"]

T = TypeVar("T")


class Assembled(Protocol):
    registry: Registry
    services: Services


class OnRegistry(Generic[T]):
    """`server.x` reads and sets `server.registry.x`."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, server: None, owner: type) -> OnRegistry[T]: ...
    @overload
    def __get__(self, server: Assembled, owner: type) -> T: ...
    def __get__(self, server: Assembled | None, owner: type) -> T | OnRegistry[T]:
        return self if server is None else cast(T, getattr(server.registry, self.name))

    def __set__(self, server: Assembled, value: T) -> None:
        setattr(server.registry, self.name, value)


class OnServices(Generic[T]):
    """`server.x` reads `server.services.<field>`; setting it gives the server new Services with that
    part replaced (a program assembling a server, before it serves: Services stay frozen)."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = self.field or name

    @overload
    def __get__(self, server: None, owner: type) -> OnServices[T]: ...
    @overload
    def __get__(self, server: Assembled, owner: type) -> T: ...
    def __get__(self, server: Assembled | None, owner: type) -> T | OnServices[T]:
        return self if server is None else cast(T, getattr(server.services, str(self.field)))

    def __set__(self, server: Assembled, value: T) -> None:
        part: dict[str, Any] = {str(self.field): value}
        server.services = replace(server.services, **part)


def install_visibility(server: Assembled, fn: VisibleFn) -> Visibility:
    """Give `server` the visibility hook `fn`: its Services and its Peers use it from now on."""
    chosen = Visibility(fn, server.registry)
    server.services = replace(server.services, visibility=chosen)
    server.services.peers.audience = chosen
    return chosen


class OnPeers(OnServices[Peers]):
    """`server.peers`: a Peers set after the visibility hook hears through it too."""

    def __set__(self, server: Assembled, value: Peers) -> None:
        super().__set__(server, value)
        value.audience = server.services.visibility
