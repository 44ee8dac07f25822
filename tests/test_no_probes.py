"""DESIGN: "no `getattr` probing of another layer's objects". Every getattr/hasattr in the package is
either on a user's object (a module the CLI loads, a pydantic model, a dependency factory, argparse's
namespace), on the module's own data, or listed here with the reason it stays; anything else fails."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mcpkit"
NAMES = ("__qualname__", "__name__", "__doc__")

ALLOWED: dict[tuple[str, str], str] = {
    (
        "_lazy.py",
        "getattr(importlib.import_module(module), name)",
    ): "the lazy exports: a module's own names",
    ("cli/__init__.py", "getattr(args, 'auth', None)"): "argparse's namespace: not every command has --auth",
    ("cli/commands.py", "hasattr(args, 'pairs')"): "argparse's namespace: not every command takes pairs",
    (
        "cluster/task_store.py",
        "getattr(end, field.name)",
    ): "a dataclass's own fields, copied record to record",
    ("cli/login.py", "getattr(args, name)"): "argparse's namespace: the --login-* options by their names",
    (
        "cli/login.py",
        "getattr(args, f'login_{name}')",
    ): "argparse's namespace: the --login-* options by their names",
    ("cli/config_file.py", "hasattr(os, 'fchmod')"): "the platform: Windows has no fchmod",
    ("cli/load.py", "hasattr(value, 'serve')"): "a user's module: what it defines is found by name",
    ("cli/load.py", "getattr(module, name, None)"): "a user's module: what it defines is found by name",
    ("cli/load.py", "getattr(module, name)"): "a user's module: what it defines is found by name",
    ("cli/serve.py", "getattr(args, name)"): "argparse's namespace: the HTTP-only flags by name",
    ("cli/workers.py", "getattr(server, 'state_sealer', None)"): "a user's target: a Server, or a bare app",
    ("client/group/filters.py", "getattr(self, kind)"): "its own rule per kind (tools, resources, prompts)",
    ("client/group/group.py", "getattr(self.catalog, kind)"): "its own catalog's table per kind",
    ("server/context.py", "getattr(schema, 'model_json_schema', None)"): "a user's schema: a pydantic model",
    ("server/depends.py", "hasattr(factory, m)"): "a user's dependency: a context manager or not",
    (
        "server/on_registry.py",
        "getattr(server.registry, self.name)",
    ): "a descriptor: the table it names",
    ("server/on_registry.py", "getattr(server.services, str(self.field))"): "a descriptor: the part it names",
    ("server/signature.py", "getattr(validated, attribute)"): "its own pydantic model's fields, by name",
    ("transports/http_client/opening.py", "getattr(auth, 'authorizing', None)"): (
        "a user's httpx.Auth: an OAuthClient says when it holds the user at a login (transports never "
        "import client)"
    ),
    (
        "transports/http_server/app.py",
        "getattr(target, 'serve', target)",
    ): "a Server or a callable",
    ("transports/http_server/app.py", "getattr(getattr(target, 'lifespan', None), 'running', None)"): (
        "a user's target: a Server's lifespan, held while sessions run (transports never import server)"
    ),
    ("transports/http_server/app.py", "getattr(target, 'lifespan', None)"): "the same lifespan, inside it",
    ("transports/stdio.py", "getattr(target, 'serve', target)"): "a Server or a callable",
}


def probes() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in ("getattr", "hasattr"):
                continue
            named = node.args[1] if len(node.args) > 1 else None
            if isinstance(named, ast.Constant) and named.value in NAMES:
                continue
            found.add((path.relative_to(PACKAGE).as_posix(), ast.unparse(node)))
    return found


def test_no_module_probes_another_layers_objects_with_getattr_or_hasattr() -> None:
    assert sorted(probes() - ALLOWED.keys()) == []


def test_every_allowed_probe_still_exists() -> None:
    assert sorted(ALLOWED.keys() - probes()) == []
