"""Turns a plain Python function into an MCP tool's JSON Schemas and a compiled argument binder.

`inspect_function` does all the expensive work once, when a tool is registered: it reads the function's
parameters and type hints, builds a pydantic model for the arguments and a `TypeAdapter` for the return
value, and produces the `inputSchema` / `outputSchema` JSON Schemas. The resulting `Signature` then only
runs the compiled validator (`bind`) or serializer (`structured`, `text`) per call.

This is the only layer of mcpkit that touches pydantic, and it imports pydantic only when a function
needs it: plain `str`/`int`/`float`/`bool` signatures are compiled by `plain_signature` (a server of such
tools never loads pydantic unless an argument needs coercing or is wrong).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import orjson

from . import plain_signature as plain
from .depends import CONTEXT, Dependencies, injected

if TYPE_CHECKING:
    import pydantic
    from pydantic.json_schema import GenerateJsonSchema

__all__ = ["ArgumentError", "Signature", "describe", "inspect_function"]

_EMPTY: Any = inspect.Parameter.empty
_NONE_TYPE = type(None)
_UNION_ORIGINS = (typing.Union, types.UnionType)
Binder = Callable[[Mapping[str, Any]], dict[str, Any]]


class ArgumentError(ValueError):
    """Tool call arguments that do not match the tool's input schema.

    `errors` holds one entry per problem: `field` (the dotted path, "" for the arguments object itself),
    `message` (pydantic's text) and `type` (pydantic's error type, e.g. "missing", "int_parsing").
    """

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        self.errors = errors
        parts = [f"{e['field']!r}: {e['message']}" if e["field"] else e["message"] for e in errors]
        super().__init__("Invalid arguments: " + "; ".join(parts))


@functools.cache
def _no_field_titles() -> type[GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class NoFieldTitles(GenerateJsonSchema):
        """Omits the titles pydantic derives from field names; titles given with `Field(title=...)` stay."""

        def field_title_should_be_set(self, schema: Any) -> bool:
            return False

    return NoFieldTitles


@functools.cache
def _any_adapter() -> pydantic.TypeAdapter[Any]:
    import pydantic

    return pydantic.TypeAdapter(Any)


@dataclasses.dataclass(frozen=True)
class Signature:
    """The compiled description of one tool function."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wraps_output: bool
    context_param: str | None
    is_async: bool
    _bind: Binder = dataclasses.field(repr=False, compare=False)
    _dump: Callable[[Any], Any] = dataclasses.field(repr=False, compare=False)
    dependencies: Dependencies = ()  # injected parameters (depends.py), not in the input schema

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate `arguments` and return the keyword arguments to call the function with."""
        return self._bind({} if arguments is None else arguments)

    def structured(self, value: Any) -> Any:
        """The JSON-ready structured content for a return value."""
        data = self._dump(value)
        return {"result": data} if self.wraps_output else data

    def text(self, value: Any) -> str:
        """The text content block for a return value: a str as is, anything else as compact JSON."""
        if isinstance(value, str):
            return value
        return self.dumps(self.structured(value))

    @staticmethod
    def dumps(data: Any) -> str:
        """Compact JSON text of already-structured data."""
        try:
            return orjson.dumps(data).decode()
        except orjson.JSONEncodeError:
            # orjson refuses integers beyond 64 bits, which Python and JSON both allow.
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def describe(fn: Callable[..., Any]) -> str | None:
    """The function's cleaned docstring, or None when it has none."""
    target, _ = _unwrap(fn)
    doc = getattr(target, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    return inspect.cleandoc(doc)


def inspect_function(
    fn: Callable[..., Any],
    *,
    context_type: type | None = None,
    structured_output: bool | None = None,
    lifespan_type: type | None = None,
) -> Signature:
    """Compile `fn` into a `Signature`; raises TypeError for functions that cannot be a tool."""
    target, preset = _unwrap(fn)
    owner = _name(target)
    hints = _type_hints(target, owner)
    context_param: str | None = None
    params: list[tuple[inspect.Parameter, Any]] = []
    dependencies: list[tuple[str, Any]] = []
    is_context = functools.partial(_is_context, context_type=context_type)
    for param in inspect.signature(fn).parameters.values():
        if param.name in preset:
            continue  # bound by functools.partial: configuration, not an argument
        _check_kind(param, owner)
        hint = hints.get(param.name, Any)
        source = injected(param, hint, lifespan_type, is_context)  # depends.py: not an argument
        if source is CONTEXT:
            if context_param is not None:
                raise TypeError(f"{owner}: more than one context parameter ({context_param}, {param.name})")
            context_param = param.name
        elif source is not None:
            dependencies.append((param.name, source))
        else:
            params.append((param, hint))
    returns = hints.get("return", _EMPTY)
    if plain.is_plain(params, returns, structured_output):
        input_schema = plain.plain_input_schema(params)
        bind = plain.plain_binder(params, lambda: _pydantic_binder(params, owner)[0])
        output_schema, wraps_output = plain.plain_output(returns, structured_output)
        slow_dump = lambda: _output(returns, structured_output, owner)[2]  # noqa: E731
        dump = plain.plain_dumper(returns, wraps_output, slow_dump)
    else:
        bind, input_schema = _pydantic_binder(params, owner)
        output_schema, wraps_output, dump = _output(returns, structured_output, owner)
    return Signature(
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_output=wraps_output,
        context_param=context_param,
        is_async=_is_async(target),
        _bind=bind,
        _dump=dump,
        dependencies=tuple(dependencies),
    )


def _pydantic_binder(
    params: list[tuple[inspect.Parameter, Any]], owner: str
) -> tuple[Binder, dict[str, Any]]:
    """A binder over a pydantic model of the parameters, and its input schema."""
    import pydantic

    # Model attributes get neutral names (see _field_definition); names maps them back.
    names = [(param.name, f"p{i}") for i, (param, _) in enumerate(params)]
    fields = {f"p{i}": _field_definition(param, hint) for i, (param, hint) in enumerate(params)}
    model, input_schema = _argument_model(fields, names, owner)
    validate = model.__pydantic_validator__.validate_python

    def bind(arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            validated = validate(arguments)
        except pydantic.ValidationError as exc:
            raise ArgumentError(_error_entries(exc)) from exc
        return {name: getattr(validated, attribute) for name, attribute in names}

    return bind, input_schema


def _unwrap(fn: Callable[..., Any]) -> tuple[Any, frozenset[str]]:
    """The callable under any functools.partial layers, and the keyword names those layers bind."""
    target: Any = fn
    preset: set[str] = set()
    while isinstance(target, functools.partial):
        preset.update(target.keywords)
        target = target.func
    return target, frozenset(preset)


def _name(target: Any) -> str:
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return str(name)


def _type_hints(target: Any, owner: str) -> dict[str, Any]:
    source = target if inspect.isroutine(target) else type(target).__call__
    try:
        return typing.get_type_hints(source, include_extras=True)
    except NameError as exc:
        raise TypeError(f"{owner}: cannot resolve type hints: {exc}") from exc


def _is_async(target: Any) -> bool:
    if inspect.iscoroutinefunction(target):
        return True
    return not inspect.isroutine(target) and inspect.iscoroutinefunction(type(target).__call__)


def _check_kind(param: inspect.Parameter, owner: str) -> None:
    if param.kind is inspect.Parameter.VAR_POSITIONAL:
        raise TypeError(f"{owner}: *{param.name} is not supported; tool parameters must be named")
    if param.kind is inspect.Parameter.VAR_KEYWORD:
        raise TypeError(f"{owner}: **{param.name} is not supported; tool parameters must be named")
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        # bind() hands back keyword arguments, which a positional-only parameter cannot take.
        raise TypeError(f"{owner}: positional-only parameter {param.name!r} is not supported")


def _strip_annotated(hint: Any) -> Any:
    return get_args(hint)[0] if get_origin(hint) is Annotated else hint


def _is_context(hint: Any, context_type: type | None) -> bool:
    if context_type is None:
        return False
    hint = _strip_annotated(hint)
    if get_origin(hint) in _UNION_ORIGINS:
        members = [member for member in get_args(hint) if member is not _NONE_TYPE]
        return bool(members) and all(_is_context(member, context_type) for member in members)
    origin = get_origin(hint) or hint
    return isinstance(origin, type) and issubclass(origin, context_type)


def _field_definition(param: inspect.Parameter, hint: Any) -> tuple[Any, Any]:
    """The create_model definition for one parameter, exposed under its own name as the alias.

    The model attribute itself gets a neutral name, so parameters called e.g. `json`, `schema` or
    `_private` neither clash with BaseModel nor trip pydantic's underscore rule.
    """
    import pydantic

    default = ... if param.default is _EMPTY else param.default
    description = _plain_description(hint, default)
    if description is None:
        extra = pydantic.Field(alias=param.name)
    else:
        extra = pydantic.Field(alias=param.name, description=description)
    return Annotated[hint, extra], default


def _plain_description(hint: Any, default: Any) -> str | None:
    """The last plain string in `Annotated` metadata, unless a `Field` already gives a description."""
    if get_origin(hint) is not Annotated:
        return None
    from pydantic.fields import FieldInfo

    metadata = get_args(hint)[1:]
    strings = [item for item in metadata if isinstance(item, str)]
    explicit = any(
        isinstance(item, FieldInfo) and item.description is not None for item in (*metadata, default)
    )
    return strings[-1] if strings and not explicit else None


def _argument_model(
    fields: dict[str, Any], names: list[tuple[str, str]], owner: str
) -> tuple[type[pydantic.BaseModel], dict[str, Any]]:
    import pydantic
    from pydantic.errors import PydanticUserError

    config = pydantic.ConfigDict(extra="ignore", arbitrary_types_allowed=False)
    try:
        model = pydantic.create_model("Arguments", __config__=config, **fields)
        raw = model.model_json_schema(schema_generator=_no_field_titles())
    except PydanticUserError as exc:
        raise TypeError(f"{owner}: cannot build the input schema: {exc}") from exc
    for name, attribute in names:
        info = model.model_fields[attribute]
        if info.alias != name or info.validation_alias not in (None, name):
            raise TypeError(f"{owner}: parameter {name!r} sets an alias; arguments are named by parameters")
    schema: dict[str, Any] = {"type": "object", "properties": raw.get("properties", {})}
    if raw.get("required"):
        schema["required"] = raw["required"]
    if "$defs" in raw:
        schema["$defs"] = raw["$defs"]
    return model, schema


def _output(
    hint: Any, structured_output: bool | None, owner: str
) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any]]:
    """(output_schema, wraps_output, serializer) for a return annotation."""
    annotation = Any if hint is _EMPTY else hint
    bare = _strip_annotated(annotation)
    wanted = structured_output
    if wanted is None:
        wanted = hint is not _EMPTY and bare not in (None, _NONE_TYPE, str)
    adapter = _adapter(annotation)
    schema = _serialization_schema(adapter) if wanted and adapter is not None else None
    if schema is None or adapter is None:
        if structured_output:
            raise TypeError(f"{owner}: structured output forced, but {annotation!r} has no JSON Schema")
        # Nothing promises a shape here, so values pydantic cannot encode fall back to str().
        return None, False, _dumper(adapter or _any_adapter(), fallback=str)
    if _is_object_type(bare):
        return _inline_root_ref(schema), False, _dumper(adapter)
    return _wrap_result(schema), True, _dumper(adapter)


def _adapter(annotation: Any) -> pydantic.TypeAdapter[Any] | None:
    import pydantic
    from pydantic.errors import PydanticUserError

    try:
        return pydantic.TypeAdapter(annotation)
    except PydanticUserError:
        return None


def _serialization_schema(adapter: pydantic.TypeAdapter[Any]) -> dict[str, Any] | None:
    from pydantic.errors import PydanticUserError

    try:
        return adapter.json_schema(mode="serialization", schema_generator=_no_field_titles())
    except PydanticUserError:
        return None


def _dumper(
    adapter: pydantic.TypeAdapter[Any], fallback: Callable[[Any], Any] | None = None
) -> Callable[[Any], Any]:
    return functools.partial(adapter.dump_python, mode="json", fallback=fallback)


def _is_object_type(bare: Any) -> bool:
    """Whether values of this type serialize to a JSON object and can be the structured content as is."""
    import pydantic
    import typing_extensions

    origin = get_origin(bare) or bare
    if origin is dict:
        key_types = get_args(bare)
        return not key_types or key_types[0] is str
    if typing_extensions.is_typeddict(origin):
        return True
    return isinstance(origin, type) and (
        issubclass(origin, pydantic.BaseModel) or dataclasses.is_dataclass(origin)
    )


def _inline_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """Recursive models come back as a bare `$ref`; an output schema must be an object at its root."""
    ref = schema.get("$ref")
    defs = schema.get("$defs", {})
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix) or ref[len(prefix) :] not in defs:
        return schema
    return {**defs[ref[len(prefix) :]], "$defs": defs}


def _wrap_result(schema: dict[str, Any]) -> dict[str, Any]:
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if defs:
        wrapped["$defs"] = defs
    return wrapped


def _error_entries(exc: pydantic.ValidationError) -> list[dict[str, Any]]:
    return [
        {
            "field": ".".join(str(part) for part in error["loc"]),
            "message": error["msg"],
            "type": error["type"],
        }
        for error in exc.errors(include_url=False, include_context=False, include_input=False)
    ]
