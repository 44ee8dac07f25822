"""Finding the Server in a file or module for `mcpkit serve` and `mcpkit install`.

A target is `file.py[:NAME]` or `package.module[:NAME]`. Without NAME: the first of `server`, `mcp`, `app`
that is a Server, else `create_server()` or `build_server()`. What the target itself gets wrong (no such
file, no Server) is a UsageError; what its code raises while loading (a syntax error, a failed import, a
factory that fails) is a LoadError whose report shows only the user's frames, not mcpkit's or importlib's.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._extras import MissingExtra
from .errors import LoadError, UsageError, needs_extra

__all__ = ["load_target", "split_target", "stdout_to_stderr", "user_report"]

OBJECTS = ("server", "mcp", "app")  # looked for in this order when the target names nothing
FACTORIES = ("create_server", "build_server")  # then these, called with no arguments
_MCPKIT = str(Path(__file__).resolve().parent) + os.sep


def split_target(target: str) -> tuple[str, str]:
    """`file.py:NAME` or `module:NAME` as (file or module, NAME or ""); only a last `:` followed by a name
    splits, so `C:\\srv\\app.py` stays a path."""
    spec, colon, name = target.rpartition(":")
    return (spec, name) if colon and name.isidentifier() else (target, "")


def is_file_target(spec: str) -> bool:
    return spec.endswith(".py") or Path(spec).is_file()


def user_report(exc: BaseException) -> str:
    """The traceback of `exc` without the frames of mcpkit and of the import machinery."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(_MCPKIT) and not f.filename.startswith("<frozen ")
    ]
    head = "Traceback (most recent call last):\n" if frames else ""
    body = "".join(traceback.format_list(frames))
    return head + body + "".join(traceback.format_exception_only(type(exc), exc))


def _running(what: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except (UsageError, KeyboardInterrupt, SystemExit):
        raise
    except MissingExtra as exc:  # the one line says what to install; the user's frames add nothing
        raise UsageError(needs_extra(exc.extra, exc.name)) from None
    except Exception as exc:
        raise LoadError(f"{what}; fix the error above and run again", user_report(exc)) from None


def _import(spec: str, argv: Sequence[str]) -> Any:
    """The module of a file path or a dotted name, imported with sys.argv as it would run."""
    if is_file_target(spec):
        path = Path(spec).resolve()
        if not path.is_file():
            raise UsageError(f"no such file: {spec}")
        sys.argv = [str(path), *argv]
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise UsageError(f"{spec} is not a Python file")
        module, loader = importlib.util.module_from_spec(module_spec), module_spec.loader
        sys.modules[path.stem] = module
        _running(f"{spec} failed to load", lambda: loader.exec_module(module))
        return module
    sys.argv = [spec, *argv]
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name is None or not spec.startswith(exc.name):
            raise LoadError(f"{spec} failed to load; fix the error above", user_report(exc)) from None
        raise UsageError(f"no module {exc.name!r} (serve a file.py, or a module on the path)") from None
    except Exception as exc:
        raise LoadError(f"{spec} failed to load; fix the error above", user_report(exc)) from None


def _servable(value: Any) -> bool:
    return hasattr(value, "serve") and not isinstance(value, type)


def _pick(module: Any, spec: str) -> tuple[str, Any]:
    """The first of OBJECTS that is a Server, else the first of FACTORIES that exists."""
    for name in OBJECTS:
        if _servable(getattr(module, name, None)):
            return name, getattr(module, name)
    for name in FACTORIES:
        if callable(getattr(module, name, None)):
            return name, getattr(module, name)
    servers = [k for k, v in vars(module).items() if _servable(v)]
    hint = f"; it has {', '.join(servers)}" if servers else ""
    looked = ", ".join([*OBJECTS, *(f"{f}()" for f in FACTORIES)])
    raise UsageError(f"{spec} has none of {looked} (name the Server as {spec}:NAME{hint})")


def load_target(target: str, argv: Sequence[str] = ()) -> Any:
    """A Server from `file.py[:NAME]` or `package.module[:NAME]`; NAME is a Server or a factory taking no
    arguments, and when absent the first of OBJECTS, then FACTORIES, that the module has."""
    spec, name = split_target(target)
    module = _import(spec, argv)
    if name:
        found = getattr(module, name, None)
        if found is None:
            raise UsageError(f"{spec} has no attribute {name!r}")
    else:
        name, found = _pick(module, spec)
    if callable(found) and not _servable(found):  # a factory
        needed = [p.name for p in inspect.signature(found).parameters.values() if p.default is p.empty]
        if needed:
            raise UsageError(f"{name}() needs {', '.join(needed)}: give a Server, or a factory taking none")
        found = _running(f"{name}() in {spec} failed", found)
    if not _servable(found):
        raise UsageError(f"{spec}:{name} is a {type(found).__name__}, not a Server (nothing to serve)")
    return found


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While loading a server to be served over stdio, what its code prints (print(), or a child process
    writing to fd 1) goes to stderr: stdout is the protocol's alone."""
    sys.stdout.flush()
    saved, previous = os.dup(1), sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
        sys.stdout = previous
