"""One field of a terminal elicitation form: how it is asked, and the answer checked against the
field's schema before the form is sent (elicitation "Form Mode": the primitive types, single- and
multi-select enums, their limits, patterns and formats).

Enums are numbered choices (a number or the value itself), a multi-select takes several separated by
commas, a boolean is yes or no and nothing else, Enter takes the default shown (or skips an optional
field). An answer the schema refuses is asked again with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from ..protocol.jsonrpc import JSON
from ..protocol.schema_check import SchemaError, compile_schema, schema_problems
from .escape import terminal_line

__all__ = ["SKIP", "Refused", "ask_field", "choices_of"]

SKIP: Any = object()  # an optional field left empty
_YES, _NO = ("y", "yes", "true"), ("n", "no", "false")
_FORMATS: dict[str, Callable[[str], bool]] = {
    "email": lambda v: re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", v) is not None,
    "uri": lambda v: re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:\S+", v) is not None,
    "date": lambda v: _parses(date.fromisoformat, v),
    "date-time": lambda v: "T" in v.upper() and _parses(datetime.fromisoformat, v),
}


class Refused(Exception):
    """The answer does not fit the field: the reason, shown before the field is asked again."""


def _parses(parse: Callable[[str], Any], value: str) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def choices_of(schema: JSON) -> list[tuple[Any, str]] | None:
    """(value, label) of an enum: `enum` (with the legacy `enumNames`), or `oneOf`/`anyOf` of consts."""
    if isinstance(schema.get("enum"), list):
        names = schema.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(schema["enum"]) else schema["enum"]
        return [(value, str(label)) for value, label in zip(schema["enum"], labels, strict=True)]
    options = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
        return [(o["const"], str(o.get("title") or o["const"])) for o in options]
    return None


def _pick(raw: str, choices: list[tuple[Any, str]]) -> Any:
    if raw.isdigit() and 1 <= int(raw) <= len(choices):
        return choices[int(raw) - 1][0]
    for value, label in choices:
        if raw in (str(value), label):
            return value
    raise Refused(f"choose a number from 1 to {len(choices)}")


def _parse(raw: str, schema: JSON) -> Any:
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        options = choices_of(items or {})
        words = [w.strip() for w in raw.split(",") if w.strip()]
        return [_pick(w, options) for w in words] if options else words
    options = choices_of(schema)
    if options:
        return _pick(raw, options)
    if kind == "boolean":
        if raw.lower() not in _YES + _NO:
            raise Refused("answer yes or no")
        return raw.lower() in _YES
    if kind in ("integer", "number"):
        try:
            return int(raw) if kind == "integer" else float(raw)
        except ValueError:
            raise Refused(f"give {'a whole number' if kind == 'integer' else 'a number'}") from None
    check = _FORMATS.get(str(schema.get("format")))
    if check is not None and not check(raw):
        raise Refused(f"give a valid {schema['format']}")
    return raw


def _check(value: Any, schema: JSON) -> None:
    """The field's own schema (limits, pattern, item counts) decides, as the server's check will."""
    try:
        validator = compile_schema(schema)
    except SchemaError:
        return  # the server sent a schema nobody can check: it will say what it wants
    problems = schema_problems(validator, value, limit=1)
    if problems:
        raise Refused(problems[0])


def hint(schema: JSON) -> str:
    """What the prompt shows after the label: the range, the choices' form, the default."""
    parts = []
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        parts.append(f"{'' if low is None else low}-{'' if high is None else high}")
    if schema.get("type") == "boolean":
        parts.append("y/n")
    if schema.get("type") == "array":
        parts.append("numbers or values, comma-separated")
    if schema.get("format") in _FORMATS:
        parts.append(str(schema["format"]))
    if "default" in schema:
        default = schema["default"]
        if isinstance(default, bool):
            default = "yes" if default else "no"
        elif isinstance(default, list):
            default = ",".join(map(str, default))
        parts.append(f"default {default}")
    return f" [{terminal_line(', '.join(parts))}]" if parts else ""


def ask_field(
    name: str, schema: JSON, required: bool, ask: Callable[[str], str], say: Callable[[str], None]
) -> Any:
    """The field's value (SKIP for an optional one left empty), asked until the schema takes it."""
    label = terminal_line(schema.get("title") or schema.get("description") or name)
    items = schema.get("items") if isinstance(schema.get("items"), dict) else None
    options = choices_of(items) if schema.get("type") == "array" and items else choices_of(schema)
    if options:
        say("    " + "  ".join(f"{i}) {terminal_line(label_)}" for i, (_, label_) in enumerate(options, 1)))
    while True:
        raw = ask(f"  {label}{'' if required else ' (optional)'}{hint(schema)}: ")
        if not raw:
            if "default" in schema:
                return schema["default"]
            if not required:
                return SKIP
            say("    an answer is required")
            continue
        try:
            value = _parse(raw, schema)
            _check(value, schema)
        except Refused as exc:
            say(f"    {terminal_line(exc)}")
            continue
        return value
