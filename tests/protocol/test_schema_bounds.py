"""Schemas from a peer are bounded and never fetch anything (2026-07-28 basic "JSON Schema Usage")."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.schema_check import MAX_SUBSCHEMAS, SchemaError, compile_schema, schema_problems


def nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["properties"] = {"a": {}}
        node = node["properties"]["a"]
    return root


def test_a_network_ref_is_refused_not_fetched() -> None:
    with pytest.raises(SchemaError, match="not fetched"):
        compile_schema({"$ref": "https://schemas.example/evil.json"})


def test_an_unknown_dialect_is_refused_clearly() -> None:
    with pytest.raises(SchemaError, match="meta-schema"):
        compile_schema({"$schema": "https://example.com/no-such-dialect"})


def test_a_schema_past_the_depth_bound_is_refused_and_one_within_compiles() -> None:
    compile_schema(nested(20))
    with pytest.raises(SchemaError, match="deeper than 64"):
        compile_schema(nested(100))
    with pytest.raises(SchemaError, match="deeper than 8"):
        compile_schema(nested(10), max_depth=8)


def test_a_schema_with_too_many_subschemas_is_refused() -> None:
    wide = {"anyOf": [{"type": "string", "minLength": i} for i in range(MAX_SUBSCHEMAS + 1)]}
    with pytest.raises(SchemaError, match="subschemas"):
        compile_schema(wide)


def test_2020_12_keywords_and_local_refs_work() -> None:
    schema = {
        "$defs": {"addr": {"$anchor": "addr", "type": "object", "required": ["city"]}},
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/addr"}, "kind": {"enum": ["a", "b"]}},
        "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
        "then": {"required": ["home"]},
    }
    validator = compile_schema(schema)
    assert schema_problems(validator, {"kind": "b"}) == []
    assert schema_problems(validator, {"kind": "a"}) != []
    assert schema_problems(validator, {"kind": "a", "home": {}}) != []
    assert schema_problems(compile_schema({"type": "array"}), [1, 2]) == []  # not only objects
