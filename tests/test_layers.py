"""The layers of DESIGN.md: imports point down only, and the package exports a short, checked API."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import mcpkit

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mcpkit"

# What each layer may import from inside mcpkit (besides itself).
ALLOWED = {
    "protocol": {"_extras"},
    "runtime": {"protocol"},
    "transports": {"protocol", "runtime", "_lazy"},
    "cluster": {"protocol", "runtime", "transports", "server", "_lazy"},
    "server": {"protocol", "runtime", "content", "_lazy"},
    "client": {"protocol", "runtime", "transports", "_lazy", "_extras"},
    "proxy": {"protocol", "runtime", "transports", "server", "client", "_lazy"},
    "auth": {"protocol", "runtime", "transports", "_lazy"},
    "testing": {"protocol", "runtime", "server", "client"},
    # the browser inspector is a part of the command line (`mcpkit inspect`): it reuses the command's
    # config files, targets and login, so it is the one layer that may import cli
    "inspector": {"protocol", "runtime", "transports", "client", "cli", "_lazy", "_extras"},
    # the command may import every layer; only the inspector (above) and __main__ import it
    "cli": {
        "protocol",
        "runtime",
        "transports",
        "cluster",
        "server",
        "client",
        "proxy",
        "auth",
        "inspector",
        "content",
        "testing",
        "_lazy",
        "_extras",
    },
    "content": set(),
    "_lazy": set(),
    "_extras": set(),
}
NEVER_IN_CORE = {"asyncio", "anyio", "httpx", "starlette", "uvicorn", "trio", "threading", "socket", "time"}


def imports_of(path: Path, root: Path = PACKAGE.parent) -> set[str]:
    """Absolute module names a file imports (relative imports resolved against `root`)."""
    tree = ast.parse(path.read_text())
    package_parts = path.relative_to(root).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                names.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.add(node.module)
    return names


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "mcpkit" and len(parts) > 1 else None


# The one import across a line the table draws: `Server.run()`, the stdio one-liner a server script ends
# with, imports the stdio transport when called (and only then). Nothing else in server/ knows a transport.
EXCEPTIONS = {("server/server.py", "mcpkit.transports.stdio")}


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        layer = layer_of(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
        if layer not in ALLOWED:
            continue
        for module in imports_of(path):
            target = layer_of(module)
            named = (path.relative_to(PACKAGE).as_posix(), module) in EXCEPTIONS
            if target is not None and target != layer and target not in ALLOWED[layer] and not named:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert wrong == []


def test_the_core_does_no_io_and_keeps_no_clock() -> None:
    offenders = [
        f"{path.name}: {module}"
        for path in (PACKAGE / "protocol").rglob("*.py")
        for module in imports_of(path)
        if module.split(".")[0] in NEVER_IN_CORE
    ]
    assert offenders == []


def test_the_checker_would_catch_a_wrong_import(tmp_path: Path) -> None:
    bad = tmp_path / "mcpkit" / "protocol" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ..server import server\nimport anyio\n")
    found = imports_of(bad, tmp_path)
    assert "mcpkit.server" in found and "anyio" in found


def test_the_public_api_is_a_short_explicit_all() -> None:
    assert sorted(mcpkit.__all__) == [
        "CapabilityError",
        "Client",
        "ConnectionFailed",
        "Context",
        "LocalError",
        "MCPError",
        "RemoteError",
        "Server",
        "ToolError",
        "__version__",
    ]
    for name in mcpkit.__all__:
        assert getattr(mcpkit, name) is not None


def test_importing_the_package_loads_nothing_else() -> None:
    code = (
        "import sys, mcpkit;"
        "print(sorted(m for m in sys.modules if m.startswith('mcpkit') or m in ('anyio','pydantic','httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['mcpkit', 'mcpkit._lazy']"


def test_a_stdio_server_never_imports_the_http_stack_or_the_client() -> None:
    code = (
        "import sys; from mcpkit import Server; import mcpkit.transports.stdio;"
        "print([m for m in sys.modules if m.startswith(('httpx','uvicorn','starlette','mcpkit.client'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("package", "names"),
    [
        ("mcpkit.client", ["Client", "connect_http", "connect_stdio"]),
        ("mcpkit.server", ["CacheHint", "Context", "Depends", "Elicited", "Server", "ToolError"]),
        (
            "mcpkit.transports",
            [
                "EventStore",
                "InMemoryEventStore",
                "StreamableHTTPApp",
                "open_http_stream",
                "serve_http",
                "serve_stdio",
                "spawn",
            ],
        ),
    ],
)
def test_each_public_subpackage_exports_a_short_explicit_all(package: str, names: list[str]) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == names
    for name in names:
        assert getattr(module, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018


def test_importing_a_subpackage_loads_none_of_its_modules() -> None:
    code = "import sys, mcpkit.client, mcpkit.server, mcpkit.transports; print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = [m for m in out.strip("[]\n").replace("'", "").split(", ") if m.startswith("mcpkit")]
    assert sorted(loaded) == ["mcpkit", "mcpkit._lazy", "mcpkit.client", "mcpkit.server", "mcpkit.transports"]


# ---- cycles and private access inside a layer --------------------------------------------------


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path, root: Path = PACKAGE.parent) -> dict[str, set[str]]:
    """Module -> the modules of the same package tree it imports: at the top, under TYPE_CHECKING and
    inside functions alike (`ast.walk` sees every import statement). `from . import x` names module x."""
    modules = {module_name(p, root): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = next(iter(imports_of_node(node, path, root)))
                subs = {f"{base}.{alias.name}" for alias in node.names}
                targets.update(subs & modules.keys() or {base})
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def imports_of_node(node: ast.ImportFrom, path: Path, root: Path) -> set[str]:
    if not node.level:
        return {node.module or ""}
    package_parts = path.relative_to(root).with_suffix("").parts[:-1]
    base = package_parts[: len(package_parts) - node.level + 1]
    return {".".join([*base, node.module] if node.module else base)}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle_even_counting_type_checking_and_lazy_imports() -> None:
    assert cycles(import_graph(PACKAGE)) == []


def test_the_cycle_finder_finds_a_cycle_hidden_under_type_checking_or_in_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "mcpkit" / "server"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "c.py").write_text("from mcpkit.server.a import A\n")
    (pkg / "d.py").write_text("from .a import A\n")
    found = cycles(import_graph(pkg, tmp_path))
    assert found == [["mcpkit.server.a", "mcpkit.server.b", "mcpkit.server.c"]]


# Private names that are public API in spite of the underscore.
PRIVATE_BUT_DOCUMENTED = {"os._exit"}


def private_names_defined(tree: ast.Module) -> set[str]:
    """Underscore names a module defines itself: attributes it assigns, methods, slots, fields, functions."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)  # __slots__ entries
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def private_reaches(path: Path) -> list[str]:
    """`x._name` reads (x not self/cls) of an underscore name that this module does not define."""
    tree = ast.parse(path.read_text())
    own = private_names_defined(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        owner = ast.unparse(node.value)
        if owner in ("self", "cls") or node.attr in own or f"{owner}.{node.attr}" in PRIVATE_BUT_DOCUMENTED:
            continue
        found.append(f"{path.name}:{node.lineno} {owner}.{node.attr}")
    return found


def test_no_server_module_reaches_into_another_modules_private_attributes() -> None:
    """Scoped to server/ for now (issue 14 step 1); other layers follow as their seams are cut."""
    assert [hit for path in sorted((PACKAGE / "server").rglob("*.py")) for hit in private_reaches(path)] == []


def test_the_private_access_check_sees_a_reach_across_modules(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    lines = ["class A:", "    def f(self, s):", "        self._own = 1", "        return s._peers, self._own"]
    probe.write_text("\n".join(lines))
    assert private_reaches(probe) == ["probe.py:4 s._peers"]
