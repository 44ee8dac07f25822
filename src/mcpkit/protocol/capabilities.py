"""Which side may send each method, and which declared capability it needs (the table is
protocol/methods.py; Role, Owner and METHODS are re-exported here for the modules that check them).

Spec: lifecycle "Capability Negotiation" and each feature page's "Capabilities" section. A method
missing from the table, or sent by the wrong side, is not a method of the protocol (-32601). The
error text is built from the failed lookup, so every refusal names the rule that refused it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import METHOD_NOT_FOUND, CapabilityError, LocalError, RemoteError
from .methods import METHODS, NO_RULES, MethodSpec, Owner, Role

__all__ = [
    "METHODS",
    "NO_RULES",
    "MethodSpec",
    "Owner",
    "Role",
    "declares",
    "inbound_rule",
    "outbound_rule",
    "param_capability",
    "rule_for",
]


def rule_for(
    method: str,
    sender: Role,
    notification: bool,
    modern: bool = False,
    extra: Mapping[str, MethodSpec] = NO_RULES,
) -> MethodSpec | str:
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
    extra: Mapping[str, MethodSpec] = NO_RULES,
) -> MethodSpec:
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
    extra: Mapping[str, MethodSpec] = NO_RULES,
) -> MethodSpec:
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
