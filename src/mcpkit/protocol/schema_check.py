"""Validating a value against a raw JSON Schema (draft 2020-12 unless the schema says otherwise).

`$ref` is resolved only inside the schema itself: a retriever that refuses every URI means a schema
from a peer can never make this process fetch anything over the network.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs

__all__ = ["SchemaError", "compile_schema", "schema_problems"]


class SchemaError(ValueError):
    """The schema itself is not a valid JSON Schema."""


def _refuse(uri: str) -> Any:
    raise ValueError(f"external $ref {uri!r} is not fetched")


def compile_schema(schema: dict[str, Any]) -> Any:
    """A compiled validator for `schema`; raise SchemaError if it is not a usable schema."""
    try:
        return jsonschema_rs.validator_for(schema, retriever=_refuse)
    except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError) as exc:
        raise SchemaError(f"invalid JSON Schema: {str(exc).splitlines()[0]}") from None


def schema_problems(validator: Any, value: Any, limit: int = 5) -> list[str]:
    """Up to `limit` messages, each naming the offending field; empty when `value` is valid."""
    if validator.is_valid(value):
        return []
    problems: list[str] = []
    for error in validator.iter_errors(value):
        path = ".".join(str(part) for part in error.instance_path)
        problems.append(f"{path!r}: {error.message}" if path else error.message)
        if len(problems) >= limit:
            break
    return problems
