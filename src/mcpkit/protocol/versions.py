"""The one registry of protocol versions, and the table of which version has which feature.

Code above the core asks `has(version, Feature.X)`; it never compares date strings.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST",
    "SUPPORTED_VERSIONS",
    "Feature",
    "has",
    "negotiate",
]


class Feature(enum.Enum):
    AUDIO_CONTENT = "audio content"
    COMPLETION = "completion/complete"
    TOOL_ANNOTATIONS = "tool annotations"
    PROGRESS_MESSAGE = "progress message"
    STRUCTURED_OUTPUT = "structuredContent and outputSchema"
    ELICITATION = "elicitation/create (form mode)"
    RESOURCE_LINK = "resource_link content"
    TITLES = "title on primitives"
    META_ON_TYPES = "_meta on primitives"
    COMPLETION_CONTEXT = "completion context"
    ICONS = "icons"
    URL_ELICITATION = "URL mode elicitation"
    SAMPLING_TOOLS = "tools in sampling"
    TOOL_ERRORS_AS_RESULTS = "input validation errors as tool results"
    HTTP_PROTOCOL_HEADER = "MCP-Protocol-Version header"
    SSE_PRIMING = "SSE priming event and retry (resumable POST streams)"
    JSONRPC_BATCH = "JSON-RPC batching"


V2024_11_05: Final = "2024-11-05"
V2025_03_26: Final = "2025-03-26"
V2025_06_18: Final = "2025-06-18"
V2025_11_25: Final = "2025-11-25"

# The versions that negotiate with `initialize`, oldest first.
HANDSHAKE_VERSIONS: Final[tuple[str, ...]] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = HANDSHAKE_VERSIONS
LATEST: Final = HANDSHAKE_VERSIONS[-1]

_FIRST_VERSION: Final[dict[Feature, str]] = {
    Feature.AUDIO_CONTENT: V2025_03_26,
    Feature.COMPLETION: V2025_03_26,
    Feature.TOOL_ANNOTATIONS: V2025_03_26,
    Feature.PROGRESS_MESSAGE: V2025_03_26,
    Feature.JSONRPC_BATCH: V2025_03_26,
    Feature.STRUCTURED_OUTPUT: V2025_06_18,
    Feature.ELICITATION: V2025_06_18,
    Feature.RESOURCE_LINK: V2025_06_18,
    Feature.TITLES: V2025_06_18,
    Feature.META_ON_TYPES: V2025_06_18,
    Feature.COMPLETION_CONTEXT: V2025_06_18,
    Feature.HTTP_PROTOCOL_HEADER: V2025_06_18,
    Feature.ICONS: V2025_11_25,
    Feature.URL_ELICITATION: V2025_11_25,
    Feature.SAMPLING_TOOLS: V2025_11_25,
    Feature.TOOL_ERRORS_AS_RESULTS: V2025_11_25,
    Feature.SSE_PRIMING: V2025_11_25,
}
# Batching existed only in 2025-03-26; 2025-06-18 removed it.
_LAST_VERSION: Final[dict[Feature, str]] = {Feature.JSONRPC_BATCH: V2025_03_26}

_ORDER: Final[dict[str, int]] = {v: i for i, v in enumerate(SUPPORTED_VERSIONS)}


def has(version: str, feature: Feature) -> bool:
    """Whether `version` (a supported version) has `feature`."""
    index = _ORDER[version]
    last = _LAST_VERSION.get(feature)
    if last is not None and index > _ORDER[last]:
        return False
    first = _FIRST_VERSION.get(feature)
    return first is None or index >= _ORDER[first]


def negotiate(requested: object, supported: tuple[str, ...] = SUPPORTED_VERSIONS) -> str:
    """The server's answer to a client's version (lifecycle, "Version Negotiation").

    If the server supports the requested version it MUST respond with the same version;
    otherwise it MUST respond with another version it supports, which SHOULD be its latest.
    """
    if isinstance(requested, str) and requested in supported:
        return requested
    return supported[-1]
