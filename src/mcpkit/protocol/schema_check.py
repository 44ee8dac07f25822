"""Validating a value against a raw JSON Schema (draft 2020-12 unless the schema says otherwise).

`$ref` is resolved only inside the schema itself: a retriever that refuses every URI means a schema
from a peer can never make this process fetch anything over the network (2026-07-28 basic "`$ref`
Resolution"). A schema deeper than MAX_DEPTH or with more than MAX_SUBSCHEMAS objects is refused before
it is compiled ("Composition-Keyword Resource Use": bounds against a schema built to exhaust the validator).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "MAX_SUBSCHEMAS", "SchemaError", "compile_schema", "schema_problems"]

MAX_DEPTH = 64
MAX_SUBSCHEMAS = 10_000


class SchemaError(ValueError):
    """The schema itself is not a valid JSON Schema."""


def _refuse(uri: str) -> Any:
    raise ValueError(f"external $ref {uri!r} is not fetched")


def _check_size(schema: Any, max_depth: int, max_nodes: int) -> None:
    stack: list[tuple[Any, int]] = [(schema, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise SchemaError(f"invalid JSON Schema: nested deeper than {max_depth} levels")
        if isinstance(node, dict):
            nodes += 1
            if nodes > max_nodes:
                raise SchemaError(f"invalid JSON Schema: more than {max_nodes} subschemas")
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def compile_schema(
    schema: dict[str, Any], *, max_depth: int = MAX_DEPTH, max_subschemas: int = MAX_SUBSCHEMAS
) -> Any:
    """A compiled validator for `schema`; raise SchemaError if it is not a usable schema (including an
    unknown `$schema` dialect, or one past the size bounds)."""
    _check_size(schema, max_depth, max_subschemas)
    # Imported here: its ~8 MiB native library is loaded only by a process that compiles a raw schema.
    import jsonschema_rs

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
