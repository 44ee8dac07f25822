"""DESIGN's shape rules, checked over the package; each test lists every offender at once.

- Size is a prompt, not a wall: a module past 350 lines (250 in protocol/) has an entry in `LARGE` naming
  the concept that leaves it next, or why it is one idea. Squeezing lines to stay under is the wrong answer.
- No function over 50 lines.
- No module reaches into another's private names (an attribute `x._y` on anything but self/cls, or
  `from m import _y`).
- protocol/errors.py alone builds a JSON-RPC error object.
- No "half" class: one that annotates attributes in its body and never assigns them (a subclass or a
  sibling does), so it reads state it does not own.
- No packed assignment of three or more attributes (`self.a, self.b, self.c = ...`): one a line."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mcpkit"
MODULES = sorted(PACKAGE.rglob("*.py"))
# Private by name only: documented standard-library functions.
STDLIB_PRIVATE = {"os._exit"}

# module -> the concept that will leave it next, or why it stays one idea. One line each.
LARGE = {
    "cluster/sessions.py": (
        "routing between workers (inboxes, _route/_on_inbox, the heartbeat) leaves; serving a session's "
        "POST on any worker stays"
    ),
    "cluster/scripts.py": (
        "one idea: the Lua scripts of one shared session, mostly script text over one key layout "
        "described at the top"
    ),
    "cluster/state.py": (
        "reading a stream back (read, claim, replay_after, resume) leaves for a module of its own, as the "
        "subscription index did (uri_index.py)"
    ),
    "protocol/connection.py": (
        "one idea: one side's state machine; h11's rule 1 keeps every phase change here, the core's own "
        "methods included"
    ),
    "protocol/dpop_proof.py": (
        "ReplayCache (the jti table, the only state here) leaves; the proof's rules stay"
    ),
    "protocol/resource_auth.py": (
        "the token's claim checks (audiences_of, check_times, token_from_claims) leave; the resource "
        "server's HTTP rules stay"
    ),
    "server/signature.py": (
        "the return side (_output, _adapter, _serialization_schema, _dumper, _wrap_result: output schema "
        "and serializer) leaves"
    ),
    "transports/http_client/stream.py": (
        "resumption (_resume, _resume_once, Last-Event-ID) and session renewal (_renew, "
        "_replay_handshake) leave"
    ),
}

# Half classes known today, and why they may stay for now.
HALF_CLASSES: dict[str, str] = {}


def name(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def listed(offenders: list[str], heading: str = "offenders:") -> str:
    return "\n".join([heading, *offenders])


def threshold(path: Path) -> int:
    return 250 if name(path).startswith("protocol/") else 350


def trees() -> Iterator[tuple[str, ast.Module]]:
    for path in MODULES:
        yield name(path), ast.parse(path.read_text())


def test_every_module_past_its_threshold_names_what_leaves_it_next() -> None:
    lines = {name(p): len(p.read_text().splitlines()) for p in MODULES}
    large = {m for p in MODULES if lines[m := name(p)] > threshold(p)}
    unnamed = [
        f"{m}: {lines[m]} lines; add it to LARGE with the concept that leaves next" for m in sorted(large)
    ]
    stale = [
        f"{m}: {lines.get(m, 'no such module')}; drop its LARGE entry" for m in sorted(set(LARGE) - large)
    ]
    offenders = [u for u in unnamed if u.split(":")[0] not in LARGE] + stale
    assert offenders == [], listed(offenders)


def test_no_function_is_over_50_lines() -> None:
    long = [
        f"{module}:{f.lineno} {f.name}: {length} lines"
        for module, tree in trees()
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (f.end_lineno or f.lineno) - f.lineno + 1) > 50
    ]
    assert long == [], listed(long)


def test_no_private_name_of_another_object_or_module() -> None:
    found = []
    for module, tree in trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    text = ast.unparse(node)
                    if text not in STDLIB_PRIVATE:
                        found.append(f"{module}:{node.lineno} {text}")
            elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{module}:{node.lineno} import {a.name}" for a in node.names if _private(a.name)]
    assert found == [], listed(found)


def _private(identifier: str) -> bool:
    return identifier.startswith("_") and not identifier.startswith("__")


def test_only_errors_py_builds_a_json_rpc_error_object() -> None:
    """protocol/errors.py's error_object is the one place (jsonrpc.error_response wraps it)."""
    built = [
        f"{module}:{node.lineno}"
        for module, tree in trees()
        if module != "protocol/errors.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        and {"code", "message"} <= {k.value for k in node.keys if isinstance(k, ast.Constant)}
    ]
    assert built == [], listed(built)


# Classes whose body annotations declare fields or an interface, not state set elsewhere.
DECLARING_BASES = {
    "Protocol",
    "TypedDict",
    "NamedTuple",
    "BaseModel",
    "Enum",
    "StrEnum",
    "IntEnum",
    "Exception",
}


def test_no_class_annotates_attributes_it_never_assigns() -> None:
    """Set in the class's own module counts (a factory beside it may set it); set only by a subclass elsewhere
    does not."""
    found = {}
    for module, tree in trees():
        classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        declaring = _declaring(classes)
        assigned = {t.attr for node in ast.walk(tree) for t in _targets(node) if isinstance(t, ast.Attribute)}
        for cls in classes:
            unassigned = [a for a in _annotated(cls) if a not in assigned]
            if cls.name not in declaring and unassigned:
                found[f"{module}: {cls.name}"] = f"{cls.lineno}: {', '.join(unassigned)}"
    half = [f"{where}:{what}" for where, what in found.items() if where not in HALF_CLASSES]
    assert half == [], listed(half)
    outlived = [known for known in HALF_CLASSES if known not in found]
    assert outlived == [], listed(outlived, "HALF_CLASSES entries whose class is whole now (drop them):")


def _declaring(classes: list[ast.ClassDef]) -> set[str]:
    """The dataclasses, protocols, typed dicts, models and the like (and their subclasses in the module):
    their annotations are their fields."""
    declaring: set[str] = set()
    for cls in classes:  # ast.walk meets a base defined in the module before its subclasses
        decorators = {ast.unparse(d).split("(")[0].split(".")[-1] for d in cls.decorator_list}
        bases = {ast.unparse(b).split("[")[0].split(".")[-1] for b in cls.bases}
        if "dataclass" in decorators or bases & (DECLARING_BASES | declaring):
            declaring.add(cls.name)
    return declaring


def _annotated(cls: ast.ClassDef) -> list[str]:
    return [
        s.target.id
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name)
        if "ClassVar" not in ast.unparse(s.annotation)
    ]


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [e for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target]
    return []


def test_no_line_assigns_three_attributes_or_more() -> None:
    packed = [
        f"{module}:{node.lineno} {ast.unparse(node)[:80]}"
        for module, tree in trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and sum(isinstance(e, ast.Attribute) for e in _targets(node)) >= 3
    ]
    assert packed == [], listed(packed)
