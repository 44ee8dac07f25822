"""What the registry and the primitives (tools, resources, prompts, extensions, dependencies) use of the
request they serve: a leaf module, so they can say what they take without importing context.py (which
imports what imports them)."""

from __future__ import annotations

from typing import Any, Protocol

from ..protocol.lifecycle import Negotiated

__all__ = ["RequestContext"]


class RequestContext(Protocol):
    """The request's Context (server/context.py) as the registry and the primitives see it."""

    @property
    def negotiated(self) -> Negotiated: ...

    @property
    def client_capabilities(self) -> dict[str, Any]: ...

    @property
    def lifespan(self) -> Any: ...
