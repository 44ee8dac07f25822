"""RFC 6570 URI Templates: parse once, expand at levels 1-4, and match concrete URIs back to their values.

Matching is what the MCP resource router needs, and it is kept deterministic so that hostile URIs cannot
cause catastrophic backtracking. A first regex splits the URI into one span per expression: literals are
fixed, and each span is an atomic group that ends where the text following it in the template first
occurs. Each span is then matched by the expression's own small regex. A trailing query
(``{?a,b}{&c}``, ``?fixed=yes{&c}``) is not matched by regex at all but parsed as parameters, so they may
come in any order, any subset may be present, and unknown ones are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import quote, unquote

__all__ = ["TemplateError", "UriTemplate"]

_MAX_LENGTH = 2048
_MAX_EXPRESSIONS = 64
_RESERVED = ":/?#[]@!$&'()*+,;="
_VARNAME = re.compile(r"(?:\w|%[0-9A-Fa-f]{2})(?:\.?(?:\w|%[0-9A-Fa-f]{2}))*", re.ASCII)
_PREFIX = re.compile(r"[1-9][0-9]{0,3}")  # RFC 6570 2.4.1: max-length is a positive integer below 10000
_PCT_TRIPLET = re.compile(r"(%[0-9A-Fa-f]{2})")
_PCT_OR_CHAR = re.compile(r"%[0-9A-Fa-f]{2}|.", re.DOTALL)
_EXPRESSION = re.compile(r"\{[^{}]+\}")
_NOT_VARCHAR = r"(?![\w.%])"

_Value = str | list[str]


class TemplateError(ValueError):
    """A URI template that is not well-formed according to RFC 6570."""


class _Op(NamedTuple):
    first: str
    sep: str
    named: bool
    ifemp: str
    reserved: bool
    span: str  # characters a match span of this operator never crosses
    value: str  # characters that end one value inside the expression


# RFC 6570 Appendix A, extended with the character classes matching uses.
_OPS: dict[str, _Op] = {
    "": _Op("", ",", False, "", False, "/?#", "/?#,"),
    "+": _Op("", ",", False, "", True, "", ","),
    "#": _Op("#", ",", False, "", True, "", ","),
    ".": _Op(".", ".", False, "", False, "/?#", "/?#."),
    "/": _Op("/", "/", False, "", False, "?#", "/?#"),
    ";": _Op(";", ";", True, "", False, "/?#", "/?#;"),
    "?": _Op("?", "&", True, "=", False, "#", "#&"),
    "&": _Op("&", "&", True, "=", False, "#", "#&"),
}


@dataclass(frozen=True, slots=True)
class _VarSpec:
    name: str
    prefix: int | None
    explode: bool


@dataclass(frozen=True, slots=True)
class _Expression:
    op: _Op
    specs: tuple[_VarSpec, ...]


_Part = str | _Expression


def _parse(template: str) -> list[_Part]:
    if len(template) > _MAX_LENGTH:
        raise TemplateError(f"URI template is longer than {_MAX_LENGTH} characters")
    parts: list[_Part] = []
    position = 0
    while position < len(template):
        start = template.find("{", position)
        literal = template[position:] if start < 0 else template[position:start]
        if "}" in literal:
            raise TemplateError(f"unmatched '}}' at offset {position + literal.index('}')} in {template!r}")
        if literal:
            # RFC 6570 3.1: literal characters not allowed in a URI are copied pct-encoded.
            parts.append(_encode(literal, reserved=True))
        if start < 0:
            break
        end = template.find("}", start)
        if end < 0 or "{" in template[start + 1 : end]:
            raise TemplateError(f"unclosed '{{' at offset {start} in {template!r}")
        parts.append(_parse_expression(template[start + 1 : end]))
        position = end + 1
    if sum(isinstance(part, _Expression) for part in parts) > _MAX_EXPRESSIONS:
        raise TemplateError(f"URI template has more than {_MAX_EXPRESSIONS} expressions")
    return parts


def _parse_expression(body: str) -> _Expression:
    if not body:
        raise TemplateError("empty expression '{}'")
    if body[0] in "=,!@|":  # RFC 6570 2.2: op-reserve, kept for future extensions
        raise TemplateError(f"reserved operator {body[0]!r} in {{{body}}}")
    if body[0] not in _OPS and not _VARNAME.match(body):
        raise TemplateError(f"unknown operator {body[0]!r} in {{{body}}}")
    operator = body[0] if body[0] in _OPS else ""
    specs = body[len(operator) :].split(",")
    return _Expression(_OPS[operator], tuple(_parse_varspec(spec, body) for spec in specs))


def _parse_varspec(text: str, body: str) -> _VarSpec:
    explode = text.endswith("*")
    name, colon, length = (text[:-1] if explode else text).partition(":")
    if "*" in name or (colon and (explode or not _PREFIX.fullmatch(length))):
        raise TemplateError(f"bad modifier {text!r} in {{{body}}}")
    if not _VARNAME.fullmatch(name):
        raise TemplateError(f"invalid variable name {name!r} in {{{body}}}")
    return _VarSpec(name, int(length) if colon else None, explode)


def _encode(text: str, reserved: bool) -> str:
    if not reserved:
        return quote(text, safe="")
    # RFC 6570 3.2.3: reserved expansion passes pct-encoded triplets through untouched.
    pieces = _PCT_TRIPLET.split(text)
    return "".join(piece if odd % 2 else quote(piece, safe=_RESERVED) for odd, piece in enumerate(pieces))


def _prefix(value: str, length: int | None, reserved: bool) -> str:
    if length is None:
        return value
    if not reserved:
        return value[:length]
    # RFC 6570 3.2.1: lengths count characters, so a pct-encoded triplet is never split.
    return "".join(_PCT_OR_CHAR.findall(value)[:length])


def _normalize(value: object) -> str | list[str] | dict[str, str] | None:
    # RFC 6570 2.3: an empty list, or a map without defined values, is undefined.
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {str(key): str(item) for key, item in value.items() if item is not None} or None
    if isinstance(value, list | tuple):
        return [str(item) for item in value if item is not None] or None
    return str(value)


def _named(op: _Op, name: str, text: str) -> str:
    return f"{name}={text}" if text else f"{name}{op.ifemp}"


def _expand_spec(op: _Op, spec: _VarSpec, value: str | list[str] | dict[str, str]) -> str:
    if isinstance(value, str):
        text = _encode(_prefix(value, spec.prefix, op.reserved), op.reserved)
        return _named(op, spec.name, text) if op.named else text
    if spec.explode:
        if isinstance(value, dict):
            pairs = [(_encode(key, op.reserved), _encode(item, op.reserved)) for key, item in value.items()]
            return op.sep.join(_named(op, key, item) if op.named else f"{key}={item}" for key, item in pairs)
        items = [_encode(item, op.reserved) for item in value]
        return op.sep.join(_named(op, spec.name, item) if op.named else item for item in items)
    # RFC 6570 2.4.1: a prefix modifier does not apply to composite values, so it is ignored.
    flat = [part for pair in value.items() for part in pair] if isinstance(value, dict) else value
    text = ",".join(_encode(item, op.reserved) for item in flat)
    return _named(op, spec.name, text) if op.named else text


def _expand_expression(expression: _Expression, values: Mapping[str, object]) -> str:
    op = expression.op
    expanded = []
    for spec in expression.specs:
        value = _normalize(values.get(spec.name))
        if value is not None:
            expanded.append(_expand_spec(op, spec, value))
    return op.first + op.sep.join(expanded) if expanded else ""


def _class(excluded: str) -> str:
    return f"[^{re.escape(excluded)}]" if excluded else "."


def _span_pattern(op: _Op, follower: str, literal: bool) -> str:
    guard = f"(?!{re.escape(follower)})" if follower else ""
    body = f"(?:{guard}{_class(op.span)})*"
    if op.first:
        # A following literal wins over starting this expression; a following operator may share our lead.
        body = f"(?:{guard if literal else ''}{re.escape(op.first)}{body})?"
    return f"(?>{body})"


def _named_pattern(op: _Op, index: int, spec: _VarSpec) -> str:
    lead = f"[{re.escape(op.first + op.sep)}]{re.escape(spec.name)}{_NOT_VARCHAR}"
    value = _class(op.value) + "*"
    if spec.explode:
        return f"(?P<g{index}>(?:{lead}(?:={value})?)*)"
    return f"(?:{lead}(?P<g{index}>(?:={value})?))?"


def _expression_pattern(expression: _Expression) -> re.Pattern[str]:
    op, specs = expression.op, expression.specs
    if op.named:
        return re.compile("".join(_named_pattern(op, i, spec) for i, spec in enumerate(specs)), re.DOTALL)
    single = len(specs) == 1 and not specs[0].explode
    value = _class("" if op.reserved and single else op.value) + "*"
    sep = re.escape(op.sep)
    pattern = ""
    # Nested so that a later value is only tried once the earlier one matched: expansion is positional.
    for index in reversed(range(len(specs))):
        group = f"{value}(?:{sep}{value})*" if specs[index].explode else value
        lead = re.escape(op.first if index == 0 else op.sep)
        pattern = f"(?:{lead}(?P<g{index}>{group}){pattern})?"
    return re.compile(pattern, re.DOTALL)


def _compile_head(
    parts: list[_Part],
) -> tuple[re.Pattern[str], tuple[tuple[_Expression, re.Pattern[str]], ...]]:
    pattern: list[str] = []
    expressions: list[tuple[_Expression, re.Pattern[str]]] = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            pattern.append(re.escape(part))
            continue
        follower = parts[index + 1] if index + 1 < len(parts) else ""
        literal = isinstance(follower, str)
        after = follower if isinstance(follower, str) else follower.op.first
        pattern.append(f"(?P<s{len(expressions)}>{_span_pattern(part.op, after, literal)})")
        expressions.append((part, _expression_pattern(part)))
    return re.compile("".join(pattern), re.DOTALL), tuple(expressions)


def _query_pairs(query: str) -> list[tuple[str, str]]:
    items = (item.partition("=") for item in query.split("&") if item)
    return [(unquote(key), unquote(value)) for key, _, value in items]


def _split_query(
    parts: list[_Part],
) -> tuple[list[_Part], tuple[_VarSpec, ...] | None, tuple[tuple[str, str], ...]]:
    """Separate a trailing query made only of `?`/`&` expressions and `&k=v` literals from the rest."""
    starts = [
        index
        for index, part in enumerate(parts)
        if (part.op is _OPS["?"] if isinstance(part, _Expression) else "?" in part)
    ]
    if not starts:
        return parts, None, ()
    head, tail = parts[: starts[0]], parts[starts[0] :]
    if isinstance(tail[0], str):
        before, _, after = tail[0].partition("?")
        head, tail = [*head, before] if before else head, ["&" + after, *tail[1:]]
    specs: list[_VarSpec] = []
    fixed: list[tuple[str, str]] = []
    for part in tail:
        if isinstance(part, _Expression) and part.op.first in ("?", "&"):
            specs.extend(part.specs)
        elif isinstance(part, str) and part.startswith("&") and "#" not in part:
            fixed.extend(_query_pairs(part))
        else:
            return parts, None, ()
    return head, tuple(specs), tuple(fixed)


def _extract(expression: _Expression, found: re.Match[str]) -> Iterator[tuple[_VarSpec, _Value]]:
    op = expression.op
    for index, spec in enumerate(expression.specs):
        text = found.group(f"g{index}")
        if text is None or (op.named and spec.explode and not text):
            continue
        if op.named:
            pieces = (
                [piece.partition("=")[2] for piece in text[1:].split(op.sep)] if spec.explode else [text[1:]]
            )
        else:
            pieces = text.split(op.sep) if spec.explode else [text]
        values = [unquote(piece) for piece in pieces]
        yield spec, values if spec.explode else values[0]


def _resolve(found: list[tuple[_VarSpec, _Value]]) -> dict[str, _Value] | None:
    result: dict[str, _Value] = {}
    # Full values first, then longer prefixes: a repeated variable must agree with what came before.
    for spec, value in sorted(found, key=lambda item: -(item[0].prefix or _MAX_LENGTH * 10)):
        if spec.prefix is not None and len(value) > spec.prefix:
            return None
        if result.setdefault(spec.name, value)[: spec.prefix] != value:
            return None
    return result


class UriTemplate:
    """A parsed RFC 6570 URI template that expands values into URIs and matches URIs back into values."""

    __slots__ = ("_fixed", "_head", "_parts", "_query", "_spans", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts = _parse(template)
        names = (spec.name for part in self._parts if isinstance(part, _Expression) for spec in part.specs)
        self.variables: tuple[str, ...] = tuple(dict.fromkeys(names))
        head, self._query, self._fixed = _split_query(self._parts)
        self._head, self._spans = _compile_head(head)

    @staticmethod
    def is_template(s: str) -> bool:
        """Whether `s` contains at least one `{...}` expression."""
        return _EXPRESSION.search(s) is not None

    def expand(self, values: Mapping[str, object]) -> str:
        """Expand the template; variables that are missing, None, or empty composites are skipped."""
        return "".join(
            part if isinstance(part, str) else _expand_expression(part, values) for part in self._parts
        )

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The percent-decoded variables of `uri`, or None when it is not an expansion of this template."""
        path, query = uri, ""
        if self._query is not None:
            path, _, query = uri.partition("?")
            if "#" in query:
                return None
        spans = self._head.fullmatch(path)
        if spans is None:
            return None
        found: list[tuple[_VarSpec, _Value]] = []
        for index, (expression, pattern) in enumerate(self._spans):
            inner = pattern.fullmatch(spans.group(f"s{index}"))
            if inner is None:
                return None
            found.extend(_extract(expression, inner))
        if self._query is not None:
            by_key: dict[str, list[str]] = {}
            for key, value in _query_pairs(query):
                by_key.setdefault(key, []).append(value)
            if any(value not in by_key.get(key, ()) for key, value in self._fixed):
                return None
            for spec in self._query:
                if values := by_key.get(unquote(spec.name)):
                    found.append((spec, values if spec.explode else values[0]))
        return _resolve(found)

    def __eq__(self, other: object) -> bool:
        return self.template == other.template if isinstance(other, UriTemplate) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.template)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template
