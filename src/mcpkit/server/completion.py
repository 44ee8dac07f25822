"""Argument completion (server utilities "Completion"): at most 100 values per answer."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import JSON

__all__ = ["Completions"]

_MAX_VALUES = 100


class Completions:
    """Completion functions keyed by (ref type, prompt name or template URI, argument name)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str, str], Callable[..., Any]] = {}
        self._included: list[tuple[Completions, Callable[[str, str], str | None]]] = []

    def __bool__(self) -> bool:
        return bool(self._by_key) or any(other for other, _ in self._included)

    def include(self, other: Completions, target_of: Callable[[str, str], str | None]) -> None:
        """Also complete with `other`'s functions (a mounted server's): `target_of(ref type, name or
        URI)` is the name or URI `other` knows it by, or None when it is not `other`'s."""
        self._included.append((other, target_of))

    def find(self, kind: str, target: str, argument: str) -> Callable[..., Any] | None:
        """The function completing `argument` of the prompt or template `target`, if any."""
        fn = self._by_key.get((kind, target, argument))
        for other, target_of in self._included:
            if fn is not None:
                break
            theirs = target_of(kind, target)
            fn = other.find(kind, theirs, argument) if theirs is not None else None
        return fn

    def add(self, prompt: str | None, template: str | None, argument: str, fn: Callable[..., Any]) -> None:
        if (prompt is None) == (template is None):
            raise TypeError("a completion is for exactly one of prompt= or template=")
        ref = ("ref/prompt", prompt) if prompt is not None else ("ref/resource", str(template))
        self._by_key[(ref[0], str(ref[1]), argument)] = fn

    async def complete(self, params: JSON, prompts: dict[str, Any], templates: dict[str, Any]) -> JSON:
        ref, argument = params.get("ref"), params.get("argument")
        if (
            not isinstance(ref, dict)
            or not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
        ):
            raise InvalidParams("Invalid params: completion/complete needs ref and argument.name")
        kind = ref.get("type")
        target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
        known = prompts if kind == "ref/prompt" else templates if kind == "ref/resource" else None
        if known is None or not isinstance(target, str):
            raise InvalidParams(f"Invalid params: unknown completion ref type {kind!r}")
        if target not in known:
            raise InvalidParams(f"Invalid params: no {str(kind).removeprefix('ref/')} named {target!r}")
        fn = self.find(str(kind), target, argument["name"])
        values: list[str] = []
        if fn is not None:
            context = params.get("context")
            arguments = context.get("arguments") if isinstance(context, dict) else None
            outcome = fn(str(argument.get("value", "")), arguments if isinstance(arguments, dict) else {})
            values = list(await outcome if inspect.isawaitable(outcome) else outcome)
        completion: JSON = {
            "values": values[:_MAX_VALUES],
            "total": len(values),
            "hasMore": len(values) > _MAX_VALUES,
        }
        return {"completion": completion}
