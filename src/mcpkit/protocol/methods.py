"""What each MCP method means, one row per method: who sends it, what capability it needs, in which
era it exists, which parameter names its item, whether it may ask the client, whether its result may
be cached, and which span attribute carries its item.

Every other table about methods (Mcp-Name headers, scopes, request logs, spans and metrics, the
result caches, input-required) is derived from `METHODS` here. Adding a request method is one row.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final, Literal, get_args

__all__ = [
    "ASKS_CLIENT",
    "CACHEABLE",
    "HEADER_ITEMS",
    "ITEM_FIELDS",
    "METHODS",
    "NO_RULES",
    "Item",
    "MethodSpec",
    "Owner",
    "Role",
]


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"

    __hash__ = object.__hash__  # singletons: cheaper than Enum's hash of the name (see lifecycle.Phase)

    @property
    def peer(self) -> Role:
        return Role.SERVER if self is Role.CLIENT else Role.CLIENT


class Owner(enum.Enum):
    """Whose capabilities the rule reads: the side that sends the message, or the side that gets it."""

    SENDER = "sender"
    RECEIVER = "receiver"


# The parameter that names the one item a request is about: a tool or prompt, a resource, a task.
Item = Literal["name", "uri", "taskId"]
ITEM_FIELDS: Final[tuple[Item, ...]] = get_args(Item)


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodSpec:
    """One method of the protocol (or of an extension, protocol/extensions.py)."""

    sender: Role | None  # None: either side
    capability: tuple[str, ...] = ()  # path into the owner's capabilities; () needs nothing
    owner: Owner = Owner.RECEIVER
    notification: bool = False
    before_ready: bool = False  # allowed before the lifecycle's initialization completes
    handshake: bool = True  # part of the initialize era (2024-11-05 .. 2025-11-25)
    modern: bool = True  # part of the stateless era (2026-07-28)
    item: Item | None = None  # the parameter naming the request's item
    asks_client: bool = False  # may answer input_required (patterns "Multi Round-Trip Requests")
    cacheable: bool = False  # its result may carry a cache hint (server utilities "Caching")
    span_target: str | None = None  # the semconv attribute its item goes to on spans and metrics

    def __post_init__(self) -> None:
        if self.span_target is not None and self.item is None:
            raise ValueError("a span target is the value of the method's item: give `item` too")
        if self.notification and (self.item or self.asks_client or self.cacheable):
            raise ValueError("a notification has no item, asks nothing and has no result to cache")


def _handshake_only(spec: MethodSpec) -> MethodSpec:
    return replace(spec, modern=False)


def _modern_only(spec: MethodSpec) -> MethodSpec:
    return replace(spec, handshake=False)


C, S = Role.CLIENT, Role.SERVER
_TOOL, _PROMPT, _URI = "gen_ai.tool.name", "gen_ai.prompt.name", "mcp.resource.uri"  # semconv MCP

# 2026-07-28 changelog: initialize, ping, logging/setLevel, resources/(un)subscribe and the roots and
# elicitation-complete notifications are gone; server/discover and subscriptions/listen are new.
METHODS: Final[dict[str, MethodSpec]] = {
    # lifecycle and utilities
    "initialize": _handshake_only(MethodSpec(sender=C, before_ready=True)),
    "notifications/initialized": _handshake_only(MethodSpec(sender=C, notification=True, before_ready=True)),
    "ping": _handshake_only(MethodSpec(sender=None, before_ready=True)),
    "server/discover": _modern_only(MethodSpec(sender=C, cacheable=True)),
    "notifications/cancelled": MethodSpec(sender=None, notification=True, before_ready=True),
    "notifications/progress": MethodSpec(sender=None, notification=True, before_ready=True),
    # server features, requested by the client
    "tools/list": MethodSpec(sender=C, capability=("tools",), cacheable=True),
    "tools/call": MethodSpec(
        sender=C, capability=("tools",), item="name", asks_client=True, span_target=_TOOL
    ),
    "resources/list": MethodSpec(sender=C, capability=("resources",), cacheable=True),
    "resources/templates/list": MethodSpec(sender=C, capability=("resources",), cacheable=True),
    "resources/read": MethodSpec(
        sender=C, capability=("resources",), item="uri", asks_client=True, cacheable=True, span_target=_URI
    ),
    "resources/subscribe": _handshake_only(
        MethodSpec(sender=C, capability=("resources", "subscribe"), item="uri", span_target=_URI)
    ),
    "resources/unsubscribe": _handshake_only(
        MethodSpec(sender=C, capability=("resources", "subscribe"), item="uri", span_target=_URI)
    ),
    "subscriptions/listen": _modern_only(MethodSpec(sender=C)),
    "prompts/list": MethodSpec(sender=C, capability=("prompts",), cacheable=True),
    "prompts/get": MethodSpec(
        sender=C, capability=("prompts",), item="name", asks_client=True, span_target=_PROMPT
    ),
    "completion/complete": MethodSpec(sender=C, capability=("completions",)),
    "logging/setLevel": _handshake_only(MethodSpec(sender=C, capability=("logging",))),
    # server notifications, allowed only when the server declared them
    "notifications/tools/list_changed": MethodSpec(
        sender=S, capability=("tools", "listChanged"), owner=Owner.SENDER, notification=True
    ),
    "notifications/resources/list_changed": MethodSpec(
        sender=S, capability=("resources", "listChanged"), owner=Owner.SENDER, notification=True
    ),
    "notifications/resources/updated": MethodSpec(
        sender=S, capability=("resources", "subscribe"), owner=Owner.SENDER, notification=True
    ),
    "notifications/prompts/list_changed": MethodSpec(
        sender=S, capability=("prompts", "listChanged"), owner=Owner.SENDER, notification=True
    ),
    "notifications/subscriptions/acknowledged": _modern_only(MethodSpec(sender=S, notification=True)),
    # the server may log before initialization completes (lifecycle "Initialization")
    "notifications/message": MethodSpec(
        sender=S, capability=("logging",), owner=Owner.SENDER, notification=True, before_ready=True
    ),
    # client features, requested by the server (in 2026-07-28 only inside input-required results)
    "sampling/createMessage": MethodSpec(sender=S, capability=("sampling",)),
    "elicitation/create": MethodSpec(sender=S, capability=("elicitation",)),
    "roots/list": MethodSpec(sender=S, capability=("roots",)),
    "notifications/roots/list_changed": _handshake_only(
        MethodSpec(sender=C, capability=("roots", "listChanged"), owner=Owner.SENDER, notification=True)
    ),
    "notifications/elicitation/complete": _handshake_only(
        MethodSpec(sender=S, capability=("elicitation", "url"), notification=True)
    ),
    # tasks: the 2025-11-25 utility (a version before has none: the handler answers -32601) and the
    # 2026-07-28 extension (a request that did not declare it is answered -32021 by the handler). In
    # 2025-11-25 either side may be the receiver (a client hosts sampling and elicitation tasks).
    "tasks/get": MethodSpec(sender=None, item="taskId"),
    "tasks/cancel": MethodSpec(sender=None, item="taskId"),
    "tasks/result": _handshake_only(MethodSpec(sender=None, item="taskId")),
    "tasks/list": _handshake_only(MethodSpec(sender=None)),
    "tasks/update": _modern_only(MethodSpec(sender=C, item="taskId")),
    "notifications/tasks/status": _handshake_only(MethodSpec(sender=None, notification=True)),
    "notifications/tasks": _modern_only(MethodSpec(sender=S, notification=True)),
}

NO_RULES: Final[Mapping[str, MethodSpec]] = MappingProxyType({})

# The tables derived from METHODS, each read by the layer that needs it.
# transports "Standard Request Headers" (and the tasks extension's "Routing Headers"): Mcp-Name
# mirrors the item of a 2026-07-28 request; headers exist in that era only.
HEADER_ITEMS: Final[Mapping[str, Item]] = MappingProxyType(
    {method: spec.item for method, spec in METHODS.items() if spec.item is not None and spec.modern}
)
# patterns "Multi Round-Trip Requests", "Supported Requests": no other request may answer input_required.
ASKS_CLIENT: Final = frozenset(method for method, spec in METHODS.items() if spec.asks_client)
CACHEABLE: Final = frozenset(method for method, spec in METHODS.items() if spec.cacheable)
