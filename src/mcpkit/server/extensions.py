"""Extensions a server offers (SEP-2133): each declared under `capabilities.extensions`, with the
request methods it adds.

    ext = server.extension("io.example/search", {"maxResults": 50})

    @ext.method("search/run")
    async def run(params: dict, ctx: Context) -> dict: ...

A method of an extension reaches its handler only on a server that declares the extension (the core
answers -32601 otherwise). With `require_client=True` the request must declare the extension too
(2026-07-28: in its own `_meta` clientCapabilities; before: in initialize), else -32021 names it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..protocol.errors import InvalidParams
from ..protocol.extensions import declared, extension_rule, missing_extension, valid_identifier
from ..protocol.jsonrpc import JSON
from ..protocol.methods import MethodSpec
from .request import RequestContext

__all__ = ["Extension", "ExtensionHandler", "string_param"]

# fn(params, ctx): ctx is the request's server.Context (typed Any here: context.py imports the registry)
ExtensionHandler = Callable[[JSON, Any], Awaitable[JSON] | JSON]
F = TypeVar("F", bound=ExtensionHandler)
# Whether the caller sees an item: `shows(kind, item)`, registry.Shows (which imports this module)
Shows = Callable[[str, Any], bool]


class Extension:
    """One extension: its identifier, the settings it declares, and the methods it adds."""

    def __init__(
        self, identifier: str, settings: JSON | None = None, *, require_client: bool = False
    ) -> None:
        if not valid_identifier(identifier):
            raise ValueError(f"{identifier!r} is not an extension identifier (vendor-prefix/name)")
        self.identifier = identifier
        self.settings = dict(settings or {})
        self.require_client = require_client
        self.handlers: dict[str, ExtensionHandler] = {}

    def method(self, name: str) -> Callable[[F], F]:
        """Register `fn(params, ctx) -> result` (sync or async) as the handler of request `name`."""

        def register(fn: F) -> F:
            self.add_method(name, fn)
            return fn

        return register

    def add_method(self, name: str, fn: ExtensionHandler) -> None:
        self.handlers[name] = fn

    @property
    def rules(self) -> dict[str, MethodSpec]:
        """The core's rule for each method: sent by the client to a server declaring the extension."""
        rule = extension_rule(self.identifier)
        return dict.fromkeys(self.handlers, rule)

    async def handle(
        self, method: str, ctx: RequestContext, params: JSON, shows: Shows | None = None
    ) -> JSON:
        """Answer `method`: -32021 when the extension requires the client to declare it and this
        request's client capabilities do not. `shows`: what the caller sees of the server's items
        (a visibility hook's, server/visibility.py; None: all of them)."""
        if self.require_client and not declared(ctx.client_capabilities, self.identifier):
            raise missing_extension(self.identifier)
        outcome = self.answer(method, params, ctx, shows)
        result = await outcome if inspect.isawaitable(outcome) else outcome
        if not isinstance(result, dict):
            raise TypeError(f"the handler of {method!r} returned {type(result).__name__}, not a dict")
        return result

    def answer(self, method: str, params: JSON, ctx: Any, shows: Shows | None) -> Awaitable[JSON] | JSON:
        """What `method`'s handler answers. An extension whose answers name the server's items
        overrides it to leave out those `shows` hides, as unknown (server/skills.py)."""
        return self.handlers[method](params, ctx)


def string_param(params: JSON, name: str, method: str) -> str:
    """A required string parameter; -32602 when it is absent or not a string."""
    value = params.get(name)
    if not isinstance(value, str):
        raise InvalidParams(f"Invalid params: {method} needs a string {name}")
    return value
