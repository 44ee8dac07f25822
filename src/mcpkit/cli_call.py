"""`mcpkit call TOOL key=value ...`: the words typed into a tool's arguments, typed by its input schema.

A value is JSON where the schema's type for that key is not only a string: numbers, booleans, null, and
lists and objects (`tags='["a","b"]'`, `meta='{"k": 1}'`), also inside an anyOf such as an optional list.
A key the schema does not have is refused with the closest name; a list or object that is not JSON is
refused with an example. A number that does not parse goes to the server, whose error names the field.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import orjson

from .cli_errors import UsageError

__all__ = ["coerce", "schema_types"]

_JSON_KINDS = {"integer", "number", "boolean", "array", "object", "null"}
_OF_PYTHON = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def schema_types(schema: Any) -> set[str]:
    """The JSON types a property's schema allows: its type (or types), or those of its anyOf/oneOf."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    found: set[str] = set()
    for choice in (schema.get("anyOf") or []) + (schema.get("oneOf") or []):
        found |= schema_types(choice)
    if not found and isinstance(schema.get("enum"), list):
        found = {_OF_PYTHON.get(type(v), "string") for v in schema["enum"]}
    return found


def _fits(value: Any, allowed: set[str]) -> bool:
    kind = _OF_PYTHON.get(type(value), "")
    return kind in allowed or (kind == "integer" and "number" in allowed)


def _value(key: str, raw: str, allowed: set[str]) -> Any:
    if not allowed & _JSON_KINDS:
        return raw
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        value, problem = raw, f"not JSON: {exc}"
    else:
        if _fits(value, allowed):
            return value
        problem = f"a JSON {_OF_PYTHON.get(type(value), 'value')}"
    if "string" in allowed:
        return raw
    if allowed & {"array", "object"} and not allowed & {"integer", "number", "boolean"}:
        example = f'{key}=\'["a", "b"]\'' if "array" in allowed else f"{key}='{{\"name\": 1}}'"
        wanted = " or ".join(sorted(allowed - {"null"}))
        raise UsageError(f"argument {key!r} takes a JSON {wanted}, e.g. {example} (got {problem})")
    return value  # a bad number or boolean: the server's error names the field


def coerce(pairs: Sequence[str], schema: dict[str, Any]) -> dict[str, Any]:
    """Turn key=value words into arguments, typed by the tool's input schema."""
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise UsageError(f"argument {pair!r} is not key=value")
        if properties and key not in properties and not schema.get("additionalProperties"):
            close = difflib.get_close_matches(key, list(properties), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f" (it takes {', '.join(properties)})"
            raise UsageError(f"the tool has no argument {key!r}{hint}")
        out[key] = _value(key, raw, schema_types(properties.get(key)))
    return out
