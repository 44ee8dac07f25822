"""Extensions (SEP-2133): identifiers, what each side declared, and the rules for extension methods.

Both sides declare the extensions they support in `capabilities.extensions`, a map from an identifier
(`vendor-prefix/name`, the `_meta` key rules with a mandatory prefix) to a settings object; an empty
object declares support with no settings. In the initialize era the client declares them once, in
initialize; in 2026-07-28 it declares them per request, in the request's `_meta` clientCapabilities.
A server that needs an extension the request did not declare answers -32021 naming it.
"""

from __future__ import annotations

import re
from typing import Final

from .errors import MCPError
from .jsonrpc import JSON
from .methods import MethodSpec, Role
from .stateless import CLIENT_CAPABILITIES, missing_capability

__all__ = [
    "declared",
    "declaring",
    "extension_rule",
    "missing_extension",
    "settings_of",
    "valid_identifier",
    "with_extensions",
]

# `_meta` key naming: a prefix of dot-separated labels (each a letter, then letters, digits or
# hyphens, ending in a letter or digit), a slash, then a name of alphanumerics, `-`, `_` and `.`.
_LABEL: Final = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_IDENTIFIER: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def valid_identifier(identifier: str) -> bool:
    """Whether `identifier` is a valid extension identifier (a prefixed `_meta` key)."""
    return _IDENTIFIER.fullmatch(identifier) is not None


def settings_of(capabilities: JSON, identifier: str) -> JSON | None:
    """The settings `capabilities` declare for extension `identifier`, or None if it is not declared
    (a value that is not an object declares nothing)."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(identifier) if isinstance(extensions, dict) else None
    return settings if isinstance(settings, dict) else None


def declared(capabilities: JSON, identifier: str) -> bool:
    return settings_of(capabilities, identifier) is not None


def missing_extension(identifier: str) -> MCPError:
    """-32021 (MissingRequiredClientCapability) with requiredCapabilities.extensions[identifier]."""
    return missing_capability(("extensions", identifier))


def extension_rule(identifier: str) -> MethodSpec:
    """The rule for a request method an extension adds: sent by the client, to a server that
    declared the extension (a server that did not answers -32601; a client does not send it)."""
    return MethodSpec(sender=Role.CLIENT, capability=("extensions", identifier))


def with_extensions(capabilities: JSON, extensions: dict[str, JSON]) -> JSON:
    """`capabilities` (a copy) with `extensions` added to those it declares; ValueError for an
    identifier that breaks the naming rules."""
    for identifier in extensions:
        if not valid_identifier(identifier):
            raise ValueError(f"{identifier!r} is not an extension identifier (vendor-prefix/name)")
    if not extensions:
        return capabilities
    own = capabilities.get("extensions")
    return {**capabilities, "extensions": {**(own if isinstance(own, dict) else {}), **extensions}}


def declaring(identifier: str, settings: JSON | None = None) -> JSON:
    """A request's `_meta` declaring extension `identifier` for that request alone (2026-07-28: the
    client sends its capabilities with every request; stateless.with_request_meta merges this in)."""
    return {CLIENT_CAPABILITIES: {"extensions": {identifier: settings or {}}}}
