"""Plain-typed tools compile without pydantic, yet behave exactly as the pydantic path would."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys
from typing import Any
from unittest import mock

import pytest

from mcpkit.server import plain_signature, signature
from mcpkit.server.signature import ArgumentError, inspect_function

# The pydantic path warns when a value does not match the declared return type; that is its business.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def scalars(a: int, b: str, c: float = 1.5, d: bool = True, e: int = 0, f: str = "x") -> float:
    return 0.0


def no_return(text: str):  # type: ignore[no-untyped-def]
    return text


def returns_none(n: int) -> None:
    return None


def returns_str(text: str) -> str:
    return text


def returns_bool() -> bool:
    return True


PLAIN = [scalars, no_return, returns_none, returns_str, returns_bool]


def via_pydantic(fn: Any, structured_output: bool | None = None) -> signature.Signature:
    """The same function compiled by the pydantic path alone (inspect_function asks `plain.is_plain`)."""
    with mock.patch.object(plain_signature, "is_plain", return_value=False):
        return inspect_function(fn, structured_output=structured_output)


@pytest.mark.parametrize("fn", PLAIN)
@pytest.mark.parametrize("structured", [None, True, False])
def test_plain_schemas_equal_pydantic_schemas(fn: Any, structured: bool | None) -> None:
    try:
        expected = via_pydantic(fn, structured)
    except TypeError:
        with pytest.raises(TypeError):
            inspect_function(fn, structured_output=structured)
        return
    got = inspect_function(fn, structured_output=structured)
    assert got.input_schema == expected.input_schema
    assert got.output_schema == expected.output_schema
    assert got.wraps_output == expected.wraps_output


ARGUMENTS: list[Any] = [
    {"a": 1, "b": "t"},
    {"a": 1, "b": "t", "c": 2, "d": False, "e": 7, "f": "y", "extra": 1},
    {"a": "5", "b": "t"},
    {"a": 1.0, "b": "t", "c": "2.5"},
    {"a": True, "b": "t"},
    {"b": "t"},
    {"a": 1, "b": 3},
    {"a": 1, "b": "t", "c": math.inf},
    {"a": 2**70, "b": "t"},
    [],
    {},
]


@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_plain_binding_equals_pydantic_binding(arguments: Any) -> None:
    plain, slow = inspect_function(scalars), via_pydantic(scalars)
    try:
        expected = slow.bind(arguments)
    except ArgumentError as exc:
        with pytest.raises(ArgumentError) as caught:
            plain.bind(arguments)
        assert caught.value.errors == exc.errors
        return
    got = plain.bind(arguments)
    assert got == expected
    assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


@pytest.mark.parametrize("fn", PLAIN)
@pytest.mark.parametrize("value", ["s", 3, 2.5, math.nan, True, None, [1], {"k": 1}, 2**70])
def test_plain_serialization_equals_pydantic_serialization(fn: Any, value: Any) -> None:
    plain, slow = inspect_function(fn), via_pydantic(fn)
    got, expected = plain.structured(value), slow.structured(value)
    assert repr(got) == repr(expected)


def test_a_plain_tool_server_does_not_import_pydantic() -> None:
    code = (
        "import sys\n"
        "from mcpkit import Server\n"
        "server = Server('s', '1')\n"
        "@server.tool()\n"
        "async def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_parameters_are_checked_before_choosing_a_path() -> None:
    def positional_only(a: int, /) -> int:
        return a

    with pytest.raises(TypeError):
        inspect_function(positional_only)
    assert inspect.signature(positional_only)
