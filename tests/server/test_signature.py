"""Tests for mcpkit.server.signature: schemas from plain functions, binding, output shaping."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
from typing import Annotated, Any, Literal, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from mcpkit.server.signature import ArgumentError, Signature, describe, inspect_function

# --- types and tool functions (module level, so get_type_hints can resolve the string annotations) ---


class Context:
    pass


class RequestContext(Context):
    pass


class Point(BaseModel):
    x: int
    y: int = 0


class Node(BaseModel):
    children: list[Node] = []


class Movie(TypedDict):
    title: str
    year: int


@dataclasses.dataclass
class Size:
    width: float
    height: float


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Opaque:
    pass


def add(a: int, b: int = 2) -> int:
    return a + b


def no_parameters() -> None:
    pass


def collections(
    tags: list[str],
    scores: dict[str, float],
    pair: tuple[int, str],
    mode: Literal["fast", "slow"] = "fast",
    limit: Optional[int] = None,  # noqa: UP045 - Optional is one of the spellings under test
    ratio: float | None = None,
) -> None:
    pass


def paint(colour: Colour = Colour.RED) -> None:
    pass


def untyped(value, count=3):  # type: ignore[no-untyped-def]
    return value


def described(
    text: Annotated[str, "The text to echo"],
    times: Annotated[int, Field(description="How often", ge=0)] = 1,
    sep: str = Field(default=" ", description="Separator"),
    label: str = Field(default="x", title="Label"),
) -> str:
    return sep.join([text] * times)


def string_loses_to_field(value: Annotated[int, "plain", Field(description="from Field")]) -> None:
    pass


def move(point: Point, by: int = 1) -> Point:
    return Point(x=point.x + by, y=point.y + by)


def rate(movie: Movie) -> None:
    pass


def area(size: Size) -> float:
    return size.width * size.height


def polyline(points: list[Point]) -> None:
    pass


def echo(text: str) -> str:
    return text


def greet(name: str, ctx: Context) -> str:
    return name


def greet_annotated(name: str, ctx: Annotated[RequestContext, "injected"]) -> str:
    return name


def greet_optional(name: str, ctx: Context | None = None) -> str:
    return name


def two_contexts(a: Context, b: Context) -> None:
    pass


def variadic(*values: int) -> None:
    pass


def keywords(**options: int) -> None:
    pass


def positional_only(a: int, /) -> None:
    pass


def awkward_names(json: int, schema: str, _private: bool = False, model_config: int = 0) -> None:
    pass


def aliased(value: int = Field(default=0, alias="other")) -> None:
    pass


def takes_opaque(thing: Opaque) -> None:
    pass


def unresolvable(thing: DoesNotExist) -> None:  # type: ignore[name-defined]  # noqa: F821
    pass


def no_return_annotation(a: int):  # type: ignore[no-untyped-def]
    return a


def returns_str() -> str:
    return "hi"


def returns_point() -> Point:
    return Point(x=1)


def returns_movie() -> Movie:
    return {"title": "Alien", "year": 1979}


def returns_size() -> Size:
    return Size(1.0, 2.0)


def returns_mapping() -> dict[str, int]:
    return {"a": 1}


def returns_int_keyed_mapping() -> dict[int, str]:
    return {1: "a"}


def returns_points() -> list[Point]:
    return [Point(x=1)]


def returns_union() -> int | str:
    return 1


def returns_bool() -> bool:
    return True


def returns_time() -> datetime.datetime:
    return datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


def returns_tree() -> Node:
    return Node()


def returns_opaque() -> Opaque:
    return Opaque()


def documented() -> None:
    """First line.

    Details:
        indented.
    """


async def fetch(url: str) -> str:
    return url


class AsyncTool:
    async def __call__(self, query: str) -> list[str]:
        return [query]


class SyncTool:
    def __call__(self, query: str) -> list[str]:
        return [query]


class Service:
    def lookup(self, key: str) -> str:
        return key


def connect(host: str, port: int, secret: str) -> str:
    return host


INT_RESULT = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}


def _titles_outside_defs(schema: Any) -> list[str]:
    """Every `title` key, except those inside `$defs` (where a model's class name is kept)."""
    if isinstance(schema, list):
        return [title for item in schema for title in _titles_outside_defs(item)]
    if not isinstance(schema, dict):
        return []
    found = [schema["title"]] if isinstance(schema.get("title"), str) else []
    for key, value in schema.items():
        if key != "$defs":
            found += _titles_outside_defs(value)
    return found


# --- input schema shapes ---


def test_a_simple_function_has_an_exact_object_schema_with_required_and_defaults() -> None:
    assert inspect_function(add).input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
    }


def test_a_function_without_parameters_has_empty_properties_and_no_required_key() -> None:
    assert inspect_function(no_parameters).input_schema == {"type": "object", "properties": {}}


def test_collections_literals_and_optionals_have_exact_schemas() -> None:
    assert inspect_function(collections).input_schema == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "scores": {"type": "object", "additionalProperties": {"type": "number"}},
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
            "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
        },
        "required": ["tags", "scores", "pair"],
    }


def test_an_enum_parameter_refers_to_a_def_and_its_default_is_the_enum_value() -> None:
    assert inspect_function(paint).input_schema == {
        "type": "object",
        "properties": {"colour": {"$ref": "#/$defs/Colour", "default": "red"}},
        "$defs": {"Colour": {"enum": ["red", "green"], "title": "Colour", "type": "string"}},
    }


def test_unannotated_parameters_accept_anything() -> None:
    assert inspect_function(untyped).input_schema == {
        "type": "object",
        "properties": {"value": {}, "count": {"default": 3}},
        "required": ["value"],
    }


def test_descriptions_come_from_annotated_strings_and_fields_and_user_titles_are_kept() -> None:
    assert inspect_function(described).input_schema == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to echo"},
            "times": {"type": "integer", "description": "How often", "minimum": 0, "default": 1},
            "sep": {"type": "string", "description": "Separator", "default": " "},
            "label": {"type": "string", "title": "Label", "default": "x"},
        },
        "required": ["text"],
    }


def test_a_field_description_wins_over_a_plain_annotated_string() -> None:
    properties = inspect_function(string_loses_to_field).input_schema["properties"]
    assert properties == {"value": {"type": "integer", "description": "from Field"}}


def test_a_base_model_parameter_refers_to_its_model_in_defs() -> None:
    assert inspect_function(move).input_schema == {
        "type": "object",
        "properties": {"point": {"$ref": "#/$defs/Point"}, "by": {"type": "integer", "default": 1}},
        "required": ["point"],
        "$defs": {
            "Point": {
                "type": "object",
                "title": "Point",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                "required": ["x"],
            }
        },
    }


def test_a_typed_dict_parameter_refers_to_its_object_schema_in_defs() -> None:
    schema = inspect_function(rate).input_schema
    assert schema["properties"] == {"movie": {"$ref": "#/$defs/Movie"}}
    assert schema["required"] == ["movie"]
    assert schema["$defs"]["Movie"] == {
        "type": "object",
        "title": "Movie",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["title", "year"],
    }


def test_no_generated_titles_appear_on_the_root_or_on_properties() -> None:
    for fn in (add, collections, move, rate, area, polyline, untyped):
        assert _titles_outside_defs(inspect_function(fn).input_schema) == [], fn.__name__


def test_parameter_names_that_clash_with_pydantic_are_exposed_and_bound_unchanged() -> None:
    signature = inspect_function(awkward_names)
    assert list(signature.input_schema["properties"]) == ["json", "schema", "_private", "model_config"]
    bound = signature.bind({"json": 1, "schema": "s", "_private": True})
    assert bound == {"json": 1, "schema": "s", "_private": True, "model_config": 0}


# --- context parameter ---


def test_the_context_parameter_is_excluded_from_the_schema_and_reported() -> None:
    signature = inspect_function(greet, context_type=Context)
    assert signature.context_param == "ctx"
    assert signature.input_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    assert signature.bind({"name": "Ada"}) == {"name": "Ada"}


@pytest.mark.parametrize("fn", [greet_annotated, greet_optional])
def test_a_context_subclass_annotated_or_optional_context_is_still_the_context_parameter(fn: Any) -> None:
    signature = inspect_function(fn, context_type=Context)
    assert signature.context_param == "ctx"
    assert list(signature.input_schema["properties"]) == ["name"]


def test_without_a_context_type_there_is_no_context_parameter() -> None:
    assert inspect_function(add).context_param is None


def test_two_context_parameters_are_rejected() -> None:
    with pytest.raises(TypeError, match="more than one context parameter"):
        inspect_function(two_contexts, context_type=Context)


# --- rejected functions ---


@pytest.mark.parametrize("fn", [variadic, keywords, positional_only])
def test_star_args_star_star_kwargs_and_positional_only_parameters_are_rejected(fn: Any) -> None:
    with pytest.raises(TypeError, match=fn.__code__.co_varnames[0]):
        inspect_function(fn)


def test_a_field_alias_is_rejected_because_arguments_are_named_by_parameters() -> None:
    with pytest.raises(TypeError, match="alias"):
        inspect_function(aliased)


def test_a_parameter_of_an_arbitrary_class_is_rejected() -> None:
    with pytest.raises(TypeError, match="input schema"):
        inspect_function(takes_opaque)


def test_an_unresolvable_annotation_is_rejected() -> None:
    with pytest.raises(TypeError, match="DoesNotExist"):
        inspect_function(unresolvable)


# --- bind ---


def test_bind_converts_values_and_fills_in_defaults() -> None:
    assert inspect_function(add).bind({"a": "40"}) == {"a": 40, "b": 2}


def test_bind_instantiates_models_and_dataclasses_and_keeps_typed_dicts_as_dicts() -> None:
    assert inspect_function(move).bind({"point": {"x": 1}}) == {"point": Point(x=1, y=0), "by": 1}
    assert inspect_function(area).bind({"size": {"width": 2, "height": 3}}) == {"size": Size(2.0, 3.0)}
    bound = inspect_function(rate).bind({"movie": {"title": "Alien", "year": "1979"}})
    assert bound == {"movie": {"title": "Alien", "year": 1979}}
    assert type(bound["movie"]) is dict


def test_bind_converts_an_enum_value_to_the_member() -> None:
    assert inspect_function(paint).bind({"colour": "green"}) == {"colour": Colour.GREEN}


def test_bind_ignores_unknown_extra_arguments() -> None:
    assert inspect_function(add).bind({"a": 1, "b": 2, "c": 3}) == {"a": 1, "b": 2}


def test_bind_treats_none_as_no_arguments() -> None:
    assert inspect_function(no_parameters).bind(None) == {}
    with pytest.raises(ArgumentError, match="'a': Field required"):
        inspect_function(add).bind(None)


def test_bind_raises_argument_error_naming_the_field_with_a_wrong_type() -> None:
    with pytest.raises(ArgumentError) as caught:
        inspect_function(add).bind({"a": 1, "b": "two"})
    assert str(caught.value).startswith("Invalid arguments: 'b': Input should be a valid integer")
    assert isinstance(caught.value, ValueError)
    assert caught.value.errors == [
        {
            "field": "b",
            "message": "Input should be a valid integer, unable to parse string as an integer",
            "type": "int_parsing",
        }
    ]


def test_bind_raises_argument_error_naming_a_missing_field() -> None:
    with pytest.raises(ArgumentError) as caught:
        inspect_function(echo).bind({})
    assert str(caught.value) == "Invalid arguments: 'text': Field required"
    assert caught.value.errors == [{"field": "text", "message": "Field required", "type": "missing"}]


def test_bind_reports_nested_fields_as_dotted_paths_and_every_problem_at_once() -> None:
    with pytest.raises(ArgumentError) as caught:
        inspect_function(polyline).bind({"points": [{"x": 1}, {"x": "far"}, {}]})
    assert [error["field"] for error in caught.value.errors] == ["points.1.x", "points.2.x"]
    assert "'points.1.x': Input should be a valid integer" in str(caught.value)
    assert "; 'points.2.x': Field required" in str(caught.value)


def test_bind_enforces_field_constraints() -> None:
    with pytest.raises(ArgumentError, match="'times': Input should be greater than or equal to 0"):
        inspect_function(described).bind({"text": "hi", "times": -1})


def test_bind_rejects_arguments_that_are_not_an_object() -> None:
    with pytest.raises(ArgumentError, match="Invalid arguments: Input should be a valid dictionary"):
        inspect_function(add).bind([1, 2])  # type: ignore[arg-type]


@given(a=st.integers(), b=st.integers())
def test_bind_round_trips_any_integers(a: int, b: int) -> None:
    assert ADD.bind({"a": a, "b": b}) == {"a": a, "b": b}


ADD = inspect_function(add)


# --- output schema ---


@pytest.mark.parametrize("fn", [no_return_annotation, no_parameters, returns_str])
def test_no_annotation_none_and_str_returns_are_unstructured(fn: Any) -> None:
    signature = inspect_function(fn)
    assert signature.output_schema is None
    assert signature.wraps_output is False


def test_structured_output_true_forces_a_wrapped_schema_for_str() -> None:
    signature = inspect_function(returns_str, structured_output=True)
    assert signature.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
    }
    assert signature.wraps_output is True
    assert signature.structured("hi") == {"result": "hi"}
    assert signature.text("hi") == "hi"


def test_structured_output_true_without_an_annotation_wraps_anything() -> None:
    signature = inspect_function(no_return_annotation, structured_output=True)
    assert signature.output_schema == {"type": "object", "properties": {"result": {}}, "required": ["result"]}


def test_structured_output_false_disables_the_output_schema() -> None:
    signature = inspect_function(returns_point, structured_output=False)
    assert signature.output_schema is None
    assert signature.wraps_output is False
    assert signature.structured(Point(x=1)) == {"x": 1, "y": 0}


def test_a_base_model_return_is_its_object_schema_unwrapped() -> None:
    signature = inspect_function(returns_point)
    assert signature.output_schema == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert signature.wraps_output is False


def test_typed_dict_dataclass_and_str_keyed_dict_returns_are_unwrapped_objects() -> None:
    movie = inspect_function(returns_movie)
    assert movie.wraps_output is False
    assert movie.output_schema is not None
    assert movie.output_schema["properties"] == {"title": {"type": "string"}, "year": {"type": "integer"}}
    size = inspect_function(returns_size)
    assert size.wraps_output is False
    assert size.output_schema is not None
    assert size.output_schema["properties"] == {"width": {"type": "number"}, "height": {"type": "number"}}
    mapping = inspect_function(returns_mapping)
    assert mapping.wraps_output is False
    assert mapping.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}


@pytest.mark.parametrize(
    ("fn", "inner"),
    [
        (add, {"type": "integer"}),
        (returns_bool, {"type": "boolean"}),
        (area, {"type": "number"}),
        (returns_union, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (returns_int_keyed_mapping, {"type": "object", "additionalProperties": {"type": "string"}}),
    ],
)
def test_other_return_types_are_wrapped_under_result(fn: Any, inner: dict[str, Any]) -> None:
    signature = inspect_function(fn)
    assert signature.wraps_output is True
    assert signature.output_schema == {
        "type": "object",
        "properties": {"result": inner},
        "required": ["result"],
    }


def test_a_wrapped_list_of_models_keeps_its_defs_at_the_root() -> None:
    assert inspect_function(returns_points).output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Point"}}},
        "required": ["result"],
        "$defs": {
            "Point": {
                "type": "object",
                "title": "Point",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                "required": ["x"],
            }
        },
    }


def test_a_recursive_model_return_is_an_object_at_the_root() -> None:
    schema = inspect_function(returns_tree).output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "Node" in schema["$defs"]


def test_a_return_type_pydantic_cannot_describe_is_unstructured() -> None:
    signature = inspect_function(returns_opaque)
    assert signature.output_schema is None
    assert signature.wraps_output is False


def test_forcing_structured_output_for_a_type_pydantic_cannot_describe_is_rejected() -> None:
    with pytest.raises(TypeError, match="structured output"):
        inspect_function(returns_opaque, structured_output=True)


# --- structured() and text() ---


def test_structured_wraps_plain_values_and_text_is_compact_json_of_it() -> None:
    assert ADD.structured(3) == {"result": 3}
    assert ADD.text(3) == '{"result":3}'


def test_structured_dumps_models_in_json_mode_and_text_is_their_compact_json() -> None:
    move_signature = inspect_function(move)
    assert move_signature.structured(Point(x=1, y=2)) == {"x": 1, "y": 2}
    assert move_signature.text(Point(x=1, y=2)) == '{"x":1,"y":2}'
    assert inspect_function(returns_size).structured(Size(1, 2)) == {"width": 1.0, "height": 2.0}
    assert inspect_function(returns_points).text([Point(x=5)]) == '{"result":[{"x":5,"y":0}]}'


def test_structured_converts_values_json_cannot_hold_natively() -> None:
    signature = inspect_function(returns_time)
    assert signature.structured(returns_time()) == {"result": "2025-01-02T03:04:05Z"}


def test_text_returns_a_plain_string_unchanged() -> None:
    assert inspect_function(echo).text('he said "hi"') == 'he said "hi"'


def test_text_handles_integers_beyond_64_bits() -> None:
    assert ADD.text(2**70) == f'{{"result":{2**70}}}'


def test_unstructured_values_pydantic_cannot_encode_fall_back_to_their_str() -> None:
    signature = inspect_function(no_return_annotation)
    opaque = Opaque()
    assert signature.structured(opaque) == str(opaque)
    assert signature.text([1, {"a": 2.5}]) == '[1,{"a":2.5}]'


# --- sync/async, callables, docstrings ---


def test_async_functions_are_detected() -> None:
    assert inspect_function(fetch).is_async is True
    assert inspect_function(add).is_async is False


def test_partials_and_async_callable_objects_are_detected_as_async() -> None:
    assert inspect_function(functools.partial(fetch)).is_async is True
    assert inspect_function(AsyncTool()).is_async is True
    assert inspect_function(SyncTool()).is_async is False


def test_a_callable_object_is_inspected_through_its_call_method() -> None:
    signature = inspect_function(AsyncTool())
    assert signature.input_schema == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }
    assert signature.wraps_output is True


def test_a_bound_method_leaves_self_out() -> None:
    signature = inspect_function(Service().lookup)
    assert list(signature.input_schema["properties"]) == ["key"]


def test_parameters_bound_by_a_partial_are_not_arguments() -> None:
    signature = inspect_function(functools.partial(connect, "localhost", secret="s3cret"))
    assert signature.input_schema == {
        "type": "object",
        "properties": {"port": {"type": "integer"}},
        "required": ["port"],
    }
    assert signature.bind({"port": "80", "secret": "stolen"}) == {"port": 80}


def test_describe_returns_the_cleaned_docstring_or_none() -> None:
    assert describe(documented) == "First line.\n\nDetails:\n    indented."
    assert describe(add) is None
    assert describe(functools.partial(documented)) == "First line.\n\nDetails:\n    indented."


def test_signature_is_a_frozen_value() -> None:
    signature = inspect_function(add)
    assert isinstance(signature, Signature)
    with pytest.raises(dataclasses.FrozenInstanceError):
        signature.is_async = True  # type: ignore[misc]
