"""Tools whose parameters and return are plain `str`, `int`, `float` or `bool`, compiled without pydantic.

Importing pydantic and building a model was most of a small server's start-up time and memory, for
signatures whose JSON Schema is one fixed line per parameter. Here the schemas are written out directly
(the same dicts pydantic produces, which a test checks), and arguments of exactly the declared types pass
straight through. Anything else (a coercion such as "5" for an int, a missing argument, a value of
another type to serialize) goes to the pydantic binder or serializer, built on first use, so results and
error messages are pydantic's.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["PLAIN_TYPES", "is_plain", "plain_binder", "plain_dumper", "plain_input_schema", "plain_output"]

PLAIN_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_EMPTY: Any = inspect.Parameter.empty
_MISSING = object()
_PASS_THROUGH = (str, int, bool, type(None))

Binder = Callable[[Mapping[str, Any]], dict[str, Any]]
Dumper = Callable[[Any], Any]


def is_plain(params: Sequence[tuple[inspect.Parameter, Any]], returns: Any, structured: bool | None) -> bool:
    """Whether every parameter and the return fit the pydantic-free path."""
    for param, hint in params:
        if hint not in PLAIN_TYPES or (param.default is not _EMPTY and type(param.default) is not hint):
            return False
    if returns in PLAIN_TYPES:
        return True
    return returns in (_EMPTY, None, type(None)) and not structured


def plain_input_schema(params: Sequence[tuple[inspect.Parameter, Any]]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param, hint in params:
        prop: dict[str, Any] = {"type": PLAIN_TYPES[hint]}
        if param.default is _EMPTY:
            required.append(param.name)
        else:
            prop = {"default": param.default, **prop}
        properties[param.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def plain_output(returns: Any, structured: bool | None) -> tuple[dict[str, Any] | None, bool]:
    """(output_schema, wraps_output), as signature._output decides them."""
    wanted = structured
    if wanted is None:
        wanted = returns is not _EMPTY and returns not in (None, type(None), str)
    if not wanted or returns not in PLAIN_TYPES:
        return None, False
    result = {"type": PLAIN_TYPES[returns]}
    return {"type": "object", "properties": {"result": result}, "required": ["result"]}, True


def plain_binder(params: Sequence[tuple[inspect.Parameter, Any]], slow: Callable[[], Binder]) -> Binder:
    """Arguments of exactly the declared types (extras ignored) bound directly; the rest by `slow()`."""
    specs = tuple((p.name, hint, p.default) for p, hint in params)
    fallback: list[Binder] = []

    def bind(arguments: Mapping[str, Any]) -> dict[str, Any]:
        if type(arguments) is dict:
            out: dict[str, Any] = {}
            for name, hint, default in specs:
                value = arguments.get(name, _MISSING)
                if value is _MISSING:
                    if default is _EMPTY:
                        break
                    value = default
                elif type(value) is not hint or (hint is float and not math.isfinite(value)):
                    break
                out[name] = value
            else:
                return out
        if not fallback:
            fallback.append(slow())
        return fallback[0](arguments)

    return bind


def plain_dumper(returns: Any, wraps: bool, slow: Callable[[], Dumper]) -> Dumper:
    """JSON-ready data for a return value: plain values as they are, anything else through `slow()`."""
    exact = returns if wraps else None
    fallback: list[Dumper] = []

    def dump(value: Any) -> Any:
        kind = type(value)
        if (exact is None and kind in _PASS_THROUGH) or (kind is exact and kind is not float):
            return value
        if kind is float and (exact is None or exact is float) and math.isfinite(value):
            return value
        if not fallback:
            fallback.append(slow())
        return fallback[0](value)

    return dump
