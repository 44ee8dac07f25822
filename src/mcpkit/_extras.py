"""Optional dependencies: importing one that is not installed says, in one line, which extra brings it."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingExtra", "require"]


class MissingExtra(ModuleNotFoundError):
    """A feature's optional dependency is not installed: the message names the pip command; `extra` is
    the extra that brings it, `name` the module."""

    def __init__(self, message: str, *, name: str, extra: str) -> None:
        super().__init__(message, name=name)
        self.extra = extra


def require(module: str, extra: str, feature: str, package: str | None = None) -> ModuleType:
    """`module`, imported; MissingExtra ("<feature> needs <package>: pip install 'mcpkit[<extra>]'")
    when it is not installed."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module.partition(".")[0]:
            raise  # the module is there; something it imports is not
        needed = package or module
        message = f"{feature} needs {needed}: pip install 'mcpkit[{extra}]'"
        raise MissingExtra(message, name=module, extra=extra) from None
