"""Per-item authorization: the OAuth scopes a tool, resource, template or prompt asks of a caller's token.

A server behind mcpkit.auth.protect knows each request's verified token (`ctx.auth`). An item
registered with `scopes=` is hidden from the lists of a caller whose token lacks any of them, and
refused when called, read or got. A request with no token (stdio, an unprotected HTTP server) has no
identity to check: everything is offered, as without scopes. Over Streamable HTTP such a refusal is
answered before the message reaches the server, as HTTP 403 insufficient_scope with the scopes to ask
for (basic/authorization, "Runtime Insufficient Scope Errors"); the Server checks again as it
dispatches (`require`), for any transport that does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..protocol.errors import InvalidParams

__all__ = ["permits", "require", "visible"]


def permits(needed: frozenset[str], granted: frozenset[str] | None) -> bool:
    """Whether a caller granted `granted` (None: no token, nothing to check) may use an item."""
    return granted is None or needed <= granted


def visible(items: Iterable[Any], granted: frozenset[str] | None) -> list[Any]:
    """The items a caller may see (each has `scopes`)."""
    return [item for item in items if permits(item.scopes, granted)]


def require(needed: frozenset[str], granted: frozenset[str], method: str) -> None:
    """Refuse a request whose token lacks scopes its item asks for: -32602 whose `data` names them all
    in the form of a WWW-Authenticate challenge, so a client can ask for them (step-up)."""
    if needed <= granted:
        return
    missing = " ".join(sorted(needed - granted))
    raise InvalidParams(
        f"Insufficient scope for {method}: the access token lacks {missing}",
        {"error": "insufficient_scope", "scope": " ".join(sorted(needed))},
    )
