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
    "protocol": set(),
    "runtime": {"protocol"},
    "transports": {"protocol", "runtime", "_lazy"},
    "server": {"protocol", "runtime", "content", "transports", "_lazy"},
    "client": {"protocol", "runtime", "transports", "_lazy"},
    "auth": {"protocol", "runtime", "transports", "_lazy"},
    "content": set(),
    "_lazy": set(),
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


def test_every_import_points_down_the_layers() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        layer = layer_of(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
        if layer not in ALLOWED:
            continue
        for module in imports_of(path):
            target = layer_of(module)
            if target is not None and target != layer and target not in ALLOWED[layer]:
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
        ("mcpkit.server", ["CacheHint", "Context", "Elicited", "Server", "ToolError"]),
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
