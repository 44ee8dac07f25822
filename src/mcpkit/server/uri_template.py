"""RFC 6570 URI Templates: parse once, expand at levels 1-4, and match concrete URIs back to their values.

Matching never backtracks between expressions: one regex cuts the URI into an atomic span per expression, each
ending where the template's next text first occurs, then each span is matched by its expression's own regex.
A trailing query (``{?a,b}{&c}``) is parsed as parameters instead, so their order does not matter.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import NamedTuple
from urllib.parse import quote, unquote

__all__ = ["TemplateError", "UriTemplate", "escapes"]

_MAX_LENGTH = 2048
_MAX_EXPRESSIONS = 64
_RESERVED = ":/?#[]@!$&'()*+,;="
_VARNAME = re.compile(r"(?:\w|%[0-9A-Fa-f]{2})(?:\.?(?:\w|%[0-9A-Fa-f]{2}))*", re.ASCII)
_PREFIX = re.compile(r"[1-9][0-9]{0,3}")  # RFC 6570 2.4.1: max-length is a positive integer below 10000
_PCT_TRIPLET = re.compile(r"(%[0-9A-Fa-f]{2})")
_PCT_OR_CHAR = re.compile(r"%[0-9A-Fa-f]{2}|.", re.DOTALL)
_EXPRESSION = re.compile(r"\{[^{}]+\}")
_TOKENS = re.compile(r"\{([^{}]*)\}")
_CHAR = re.compile(r".", re.DOTALL)
_SEGMENTS = re.compile(r"[/\\]")
_ABSOLUTE = re.compile(r"[/\\]|[A-Za-z]:(?:[/\\]|$)")  # POSIX, UNC or a Windows drive


class TemplateError(ValueError):
    """A URI template that is not well-formed according to RFC 6570."""


class _Op(NamedTuple):
    first: str
    sep: str
    named: bool
    ifemp: str
    reserved: bool
    span: str  # regex class of what a match span of this operator may contain
    value: str  # regex class of one value inside such an expression


# RFC 6570 Appendix A, extended with the character classes matching uses.
_OPS: dict[str, _Op] = {
    "": _Op("", ",", False, "", False, r"[^/?#]", r"[^/?#,]"),
    "+": _Op("", ",", False, "", True, r".", r"[^,]"),
    "#": _Op("#", ",", False, "", True, r".", r"[^,]"),
    ".": _Op(".", ".", False, "", False, r"[^/?#]", r"[^/?#.]"),
    "/": _Op("/", "/", False, "", False, r"[^?#]", r"[^/?#]"),
    ";": _Op(";", ";", True, "", False, r"[^/?#]", r"[^/?#;]"),
    "?": _Op("?", "&", True, "=", False, r"[^#]", r"[^#&]"),
    "&": _Op("&", "&", True, "=", False, r"[^#]", r"[^#&]"),
}


class _VarSpec(NamedTuple):
    name: str
    prefix: int | None
    explode: bool


class _Expression(NamedTuple):
    op: _Op
    specs: tuple[_VarSpec, ...]


_Part = str | _Expression
_Value = str | list[str]
_Compiled = tuple[_Expression, re.Pattern[str]]
_Pair = tuple[str, str]


def _parse(template: str) -> list[_Part]:
    if len(template) > _MAX_LENGTH:
        raise TemplateError(f"URI template is longer than {_MAX_LENGTH} characters")
    pieces = _TOKENS.split(template)  # literal, expression body, literal, ...
    if len(pieces) > 2 * _MAX_EXPRESSIONS + 1:
        raise TemplateError(f"URI template has more than {_MAX_EXPRESSIONS} expressions")
    parts: list[_Part] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            parts.append(_parse_expression(piece))
        elif "{" in piece or "}" in piece:
            raise TemplateError(("unclosed '{'" if "{" in piece else "unmatched '}'") + f" in {template!r}")
        elif piece:
            # RFC 6570 3.1: literal characters not allowed in a URI are copied pct-encoded.
            parts.append(_encode(piece, reserved=True))
    return parts


def _parse_expression(body: str) -> _Expression:
    if not body:
        raise TemplateError("empty expression '{}'")
    if body[0] in "=,!@|":  # RFC 6570 2.2: op-reserve, kept for future extensions
        raise TemplateError(f"reserved operator {body[0]!r} in {{{body}}}")
    if body[0] not in _OPS and not _VARNAME.match(body):
        raise TemplateError(f"unknown operator {body[0]!r} in {{{body}}}")
    operator = body[0] if body[0] in _OPS else ""
    specs: list[_VarSpec] = []
    for text in body[len(operator) :].split(","):
        explode = text.endswith("*")
        name, colon, length = (text[:-1] if explode else text).partition(":")
        if "*" in name or (colon and (explode or not _PREFIX.fullmatch(length))):
            raise TemplateError(f"bad modifier {text!r} in {{{body}}}")
        if not _VARNAME.fullmatch(name):
            raise TemplateError(f"invalid variable name {name!r} in {{{body}}}")
        specs.append(_VarSpec(name, int(length) if colon else None, explode))
    return _Expression(_OPS[operator], tuple(specs))


def _encode(text: str, reserved: bool) -> str:
    if not reserved:
        return quote(text, safe="")
    # RFC 6570 3.2.3: reserved expansion passes pct-encoded triplets through untouched.
    pieces = _PCT_TRIPLET.split(text)
    return "".join(piece if odd % 2 else quote(piece, safe=_RESERVED) for odd, piece in enumerate(pieces))


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
        if spec.prefix is not None:  # RFC 6570 3.2.1: count characters, never splitting a pct-encoded triplet
            value = "".join((_PCT_OR_CHAR if op.reserved else _CHAR).findall(value)[: spec.prefix])
        text = _encode(value, op.reserved)
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
    normalized = ((spec, _normalize(values.get(spec.name))) for spec in expression.specs)
    expanded = [_expand_spec(op, spec, value) for spec, value in normalized if value is not None]
    return op.first + op.sep.join(expanded) if expanded else ""


def _named_pattern(op: _Op, index: int, spec: _VarSpec) -> str:
    lead = rf"[{re.escape(op.first + op.sep)}]{re.escape(spec.name)}(?![\w.%])"  # the whole name only
    value = op.value + "*"
    if spec.explode:
        return f"(?P<g{index}>(?:{lead}(?:={value})?)*)"
    return f"(?:{lead}(?P<g{index}>(?:={value})?))?"


def _expression_pattern(expression: _Expression) -> re.Pattern[str]:
    op, specs = expression.op, expression.specs
    if op.named:
        return re.compile("".join(_named_pattern(op, i, spec) for i, spec in enumerate(specs)), re.DOTALL)
    value = ("." if op.reserved and len(specs) == 1 and not specs[0].explode else op.value) + "*"
    pattern = ""
    # Nested so that a later value is only tried once the earlier one matched: expansion is positional.
    for index in reversed(range(len(specs))):
        group = f"{value}(?:{re.escape(op.sep)}{value})*" if specs[index].explode else value
        lead = re.escape(op.first if index == 0 else op.sep)
        pattern = f"(?:{lead}(?P<g{index}>{group}){pattern})?"
    return re.compile(pattern, re.DOTALL)


def _compile_head(parts: list[_Part]) -> tuple[re.Pattern[str], tuple[_Compiled, ...]]:
    pattern: list[str] = []
    expressions: list[_Compiled] = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            pattern.append(re.escape(part))
            continue
        follower = parts[index + 1] if index + 1 < len(parts) else ""
        after = re.escape(follower if isinstance(follower, str) else follower.op.first)
        guard = f"(?!{after})" if after else ""
        body = f"(?:{guard}{part.op.span})*"
        # A following literal wins over starting this expression; a following operator may share its lead.
        lead = f"{guard if isinstance(follower, str) else ''}{re.escape(part.op.first)}"
        body = f"(?:{lead}{body})?" if part.op.first else body
        pattern.append(f"(?P<s{len(expressions)}>(?>{body}))")
        expressions.append((part, _expression_pattern(part)))
    return re.compile("".join(pattern), re.DOTALL), tuple(expressions)


def _query_pairs(query: str) -> list[_Pair]:
    items = (item.partition("=") for item in query.split("&") if item)
    return [(unquote(key), unquote(value)) for key, _, value in items]


def _split_query(parts: list[_Part]) -> tuple[list[_Part], tuple[_VarSpec, ...] | None, tuple[_Pair, ...]]:
    """Separate a trailing query made only of `?`/`&` expressions and `&k=v` literals from the rest."""
    opens = (part.op is _OPS["?"] if isinstance(part, _Expression) else "?" in part for part in parts)
    if (start := next((index for index, found in enumerate(opens) if found), -1)) < 0:
        return parts, None, ()
    head, tail = parts[:start], parts[start:]
    if isinstance(tail[0], str):
        before, _, after = tail[0].partition("?")
        head, tail = [*head, before] if before else head, ["&" + after, *tail[1:]]
    specs: list[_VarSpec] = []
    fixed: list[_Pair] = []
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
        if op.named:  # a named value arrives as "=value", an exploded one as ";name=one;name=two"
            text = text[1:]
        pieces = [piece.partition("=")[2] if op.named else piece for piece in text.split(op.sep)]
        yield spec, [unquote(piece) for piece in pieces] if spec.explode else unquote(text)


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
        return "".join(p if isinstance(p, str) else _expand_expression(p, values) for p in self._parts)

    def match(self, uri: str) -> dict[str, str | list[str]] | None:
        """The percent-decoded variables of `uri`, or None when it is not an expansion of this template."""
        path, _, query = uri.partition("?") if self._query is not None else (uri, "", "")
        spans = self._head.fullmatch(path)
        if spans is None or "#" in query:
            return None
        found: list[tuple[_VarSpec, _Value]] = []
        for index, (expression, pattern) in enumerate(self._spans):
            inner = pattern.fullmatch(spans.group(f"s{index}"))
            if inner is None:
                return None
            found.extend(_extract(expression, inner))
        if self._query is not None:
            by_key: dict[str, list[str]] = {}
            for key, text in _query_pairs(query):
                by_key.setdefault(key, []).append(text)
            if any(text not in by_key.get(key, ()) for key, text in self._fixed):
                return None
            for spec in self._query:
                if values := by_key.get(unquote(spec.name)):
                    found.append((spec, values if spec.explode else values[0]))
        result: dict[str, _Value] = {}
        # Full values first, then longer prefixes: a repeated variable must agree with what came before, and
        # slicing to the prefix length also rejects a value longer than its prefix modifier allows.
        for spec, value in sorted(found, key=lambda item: -(item[0].prefix or _MAX_LENGTH * 10)):
            if result.setdefault(spec.name, value)[: spec.prefix] != value:
                return None
        return result

    def __eq__(self, other: object) -> bool:
        return self.template == other.template if isinstance(other, UriTemplate) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.template)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template


def escapes(values: Mapping[str, str | list[str]]) -> str | None:
    """Why a matched value could reach outside the path its template names, or None if none can.

    Refused: a `..` segment (matching decodes `%2F` and `%2E`, so a simple `{var}` can carry one),
    an absolute path, and NUL. Handlers that build file paths from values are safe by default.
    """
    for name, value in values.items():
        for text in [value] if isinstance(value, str) else value:
            if "\x00" in text:
                return f"{name!r} contains NUL"
            if _ABSOLUTE.match(text):
                return f"{name!r} is an absolute path"
            if ".." in _SEGMENTS.split(text):
                return f"{name!r} contains a '..' segment"
    return None
