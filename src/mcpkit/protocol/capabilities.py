"""Which side may send each method, and which declared capability it needs.

Spec: lifecycle "Capability Negotiation" and each feature page's "Capabilities" section. A method
missing from the table, or sent by the wrong side, is not a method of the protocol (-32601). The
error text is built from the failed lookup, so every refusal names the rule that refused it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Final

from .errors import METHOD_NOT_FOUND, CapabilityError, LocalError, RemoteError

__all__ = [
    "METHODS",
    "NO_RULES",
    "Owner",
    "Role",
    "Rule",
    "declares",
    "inbound_rule",
    "outbound_rule",
    "param_capability",
    "rule_for",
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


@dataclass(frozen=True, slots=True)
class Rule:
    sender: Role | None  # None: either side
    capability: tuple[str, ...] = ()  # path into the owner's capabilities; () needs nothing
    owner: Owner = Owner.RECEIVER
    notification: bool = False
    before_ready: bool = False  # allowed before the lifecycle's initialization completes
    handshake: bool = True  # part of the initialize era (2024-11-05 .. 2025-11-25)
    modern: bool = True  # part of the stateless era (2026-07-28)


def _handshake_only(rule: Rule) -> Rule:
    return replace(rule, modern=False)


def _modern_only(rule: Rule) -> Rule:
    return replace(rule, handshake=False)


C, S = Role.CLIENT, Role.SERVER

# 2026-07-28 changelog: initialize, ping, logging/setLevel, resources/(un)subscribe and the roots and
# elicitation-complete notifications are gone; server/discover and subscriptions/listen are new.
METHODS: Final[dict[str, Rule]] = {
    # lifecycle and utilities
    "initialize": _handshake_only(Rule(C, before_ready=True)),
    "notifications/initialized": _handshake_only(Rule(C, notification=True, before_ready=True)),
    "ping": _handshake_only(Rule(None, before_ready=True)),
    "server/discover": _modern_only(Rule(C)),
    "notifications/cancelled": Rule(None, notification=True, before_ready=True),
    "notifications/progress": Rule(None, notification=True, before_ready=True),
    # server features, requested by the client
    "tools/list": Rule(C, ("tools",)),
    "tools/call": Rule(C, ("tools",)),
    "resources/list": Rule(C, ("resources",)),
    "resources/templates/list": Rule(C, ("resources",)),
    "resources/read": Rule(C, ("resources",)),
    "resources/subscribe": _handshake_only(Rule(C, ("resources", "subscribe"))),
    "resources/unsubscribe": _handshake_only(Rule(C, ("resources", "subscribe"))),
    "subscriptions/listen": _modern_only(Rule(C)),
    "prompts/list": Rule(C, ("prompts",)),
    "prompts/get": Rule(C, ("prompts",)),
    "completion/complete": Rule(C, ("completions",)),
    "logging/setLevel": _handshake_only(Rule(C, ("logging",))),
    # server notifications, allowed only when the server declared them
    "notifications/tools/list_changed": Rule(S, ("tools", "listChanged"), Owner.SENDER, True),
    "notifications/resources/list_changed": Rule(S, ("resources", "listChanged"), Owner.SENDER, True),
    "notifications/resources/updated": Rule(S, ("resources", "subscribe"), Owner.SENDER, True),
    "notifications/prompts/list_changed": Rule(S, ("prompts", "listChanged"), Owner.SENDER, True),
    "notifications/subscriptions/acknowledged": _modern_only(Rule(S, notification=True)),
    # the server may log before initialization completes (lifecycle "Initialization")
    "notifications/message": Rule(S, ("logging",), Owner.SENDER, True, before_ready=True),
    # client features, requested by the server (in 2026-07-28 only inside input-required results)
    "sampling/createMessage": Rule(S, ("sampling",)),
    "elicitation/create": Rule(S, ("elicitation",)),
    "roots/list": Rule(S, ("roots",)),
    "notifications/roots/list_changed": _handshake_only(
        Rule(C, ("roots", "listChanged"), Owner.SENDER, True)
    ),
    "notifications/elicitation/complete": _handshake_only(
        Rule(S, ("elicitation", "url"), Owner.RECEIVER, True)
    ),
    # tasks: the 2025-11-25 utility (a version before has none: the handler answers -32601) and the
    # 2026-07-28 extension (a request that did not declare it is answered -32021 by the handler). In
    # 2025-11-25 either side may be the receiver (a client hosts sampling and elicitation tasks).
    "tasks/get": Rule(None),
    "tasks/cancel": Rule(None),
    "tasks/result": _handshake_only(Rule(None)),
    "tasks/list": _handshake_only(Rule(None)),
    "tasks/update": _modern_only(Rule(C)),
    "notifications/tasks/status": _handshake_only(Rule(None, notification=True)),
    "notifications/tasks": _modern_only(Rule(S, notification=True)),
}


NO_RULES: Final[Mapping[str, Rule]] = MappingProxyType({})


def rule_for(
    method: str, sender: Role, notification: bool, modern: bool = False, extra: Mapping[str, Rule] = NO_RULES
) -> Rule | str:
    """The rule for `method` sent by `sender`, or a sentence saying why there is none. `extra`: the
    rules of the extension methods this side knows (protocol/extensions.py), after the table's."""
    rule = METHODS.get(method) or extra.get(method)
    kind = "notification" if notification else "method"
    if rule is None or rule.notification != notification:
        return f"Method not found: {method!r} is not an MCP {kind}"
    if not (rule.modern if modern else rule.handshake):
        era = "2026-07-28 (stateless)" if modern else "initialize-era"
        return f"Method not found: {method!r} is not a {era} {kind}"
    if rule.sender is not None and rule.sender is not sender:
        return f"Method not found: {method!r} is sent by the {rule.sender.value}, not the {sender.value}"
    return rule


def declares(capabilities: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Whether `capabilities` declares the capability at `path`.

    An object (even empty) declares a capability; a sub-flag such as `listChanged` must be true.
    """
    node: Any = capabilities
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return node is not None and node is not False


def param_capability(method: str, params: dict[str, Any], receiver: dict[str, Any]) -> tuple[str, ...] | None:
    """A finer capability that some requests need because of what their params ask for."""
    if method == "elicitation/create":
        # elicitation "Capabilities": URL mode needs `url`; an empty object means form mode only.
        if params.get("mode") == "url":
            return ("elicitation", "url")
        declared = receiver.get("elicitation")
        if isinstance(declared, dict) and declared and "form" not in declared:
            return ("elicitation", "form")
        return None
    if method == "sampling/createMessage" and (params.get("tools") or params.get("toolChoice")):
        return ("sampling", "tools")  # sampling "Tools in Sampling"
    return None


def inbound_rule(
    method: str,
    receiver: Role,
    notification: bool,
    own: dict[str, Any],
    modern: bool = False,
    extra: Mapping[str, Rule] = NO_RULES,
) -> Rule:
    """The rule for a message `receiver` got; RemoteError (-32601) when it may not be sent to us."""
    rule = rule_for(method, receiver.peer, notification, modern, extra)
    if isinstance(rule, str):
        raise RemoteError(METHOD_NOT_FOUND, rule)
    if rule.capability and rule.owner is Owner.RECEIVER and not declares(own, rule.capability):
        raise RemoteError(
            METHOD_NOT_FOUND,
            f"Method not found: {method!r} needs the {receiver.value} capability "
            f"{'.'.join(rule.capability)!r}, which this {receiver.value} did not declare",
        )
    return rule


def outbound_rule(
    method: str,
    sender: Role,
    notification: bool,
    own: dict[str, Any],
    peer: dict[str, Any],
    modern: bool = False,
    params: dict[str, Any] | None = None,
    extra: Mapping[str, Rule] = NO_RULES,
) -> Rule:
    """The rule for a message `sender` is about to send; a local error before anything is sent.

    Given the request's `params`, also the finer capability they ask of the peer (`param_capability`)."""
    rule = rule_for(method, sender, notification, modern, extra)
    if isinstance(rule, str):
        raise LocalError(rule, METHOD_NOT_FOUND)
    if rule.capability:
        mine = rule.owner is Owner.SENDER
        if not declares(own if mine else peer, rule.capability):
            who = f"this {sender.value}" if mine else f"the {sender.peer.value}"
            raise CapabilityError(f"{method!r} needs {who} to declare {'.'.join(rule.capability)!r}")
    finer = param_capability(method, params, peer) if params is not None else None
    if finer and not declares(peer, finer):
        raise CapabilityError(f"the {sender.peer.value} did not declare {'.'.join(finer)!r}")
    return rule
