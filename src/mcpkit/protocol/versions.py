"""The one registry of protocol versions, and the table of which version has which feature.

Code above the core asks `has(version, Feature.X)`; it never compares date strings.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST",
    "LATEST_STATELESS",
    "STATELESS_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Feature",
    "has",
    "is_stateless",
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
    # The stateless era (2026-07-28): no initialize, `_meta` on every request, input-required
    # results instead of server-to-client requests, resultType and cache hints on results.
    STATELESS = "per-request _meta instead of the initialize handshake"
    ANY_STRUCTURED_CONTENT = "structuredContent any JSON value, outputSchema any 2020-12 schema"
    RESOURCE_NOT_FOUND_CODE = "resource not found is -32002 (later -32602)"
    ELICITATION_COMPLETE = "notifications/elicitation/complete and elicitationId"
    TASKS = "the tasks utility (from 2026-07-28 the tasks extension instead)"


V2024_11_05: Final = "2024-11-05"
V2025_03_26: Final = "2025-03-26"
V2025_06_18: Final = "2025-06-18"
V2025_11_25: Final = "2025-11-25"
V2026_07_28: Final = "2026-07-28"

# The versions that negotiate with `initialize`, oldest first.
HANDSHAKE_VERSIONS: Final[tuple[str, ...]] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
# The versions that carry their version and capabilities in each request's `_meta`.
STATELESS_VERSIONS: Final[tuple[str, ...]] = (V2026_07_28,)
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = HANDSHAKE_VERSIONS + STATELESS_VERSIONS
LATEST: Final = HANDSHAKE_VERSIONS[-1]
LATEST_STATELESS: Final = STATELESS_VERSIONS[-1]

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
    Feature.ELICITATION_COMPLETE: V2025_11_25,
    Feature.TASKS: V2025_11_25,
    Feature.STATELESS: V2026_07_28,
    Feature.ANY_STRUCTURED_CONTENT: V2026_07_28,
}
# Batching existed only in 2025-03-26; 2025-06-18 removed it.
# 2026-07-28 removed resumable streams, the -32002 code and the elicitation completion notice.
_LAST_VERSION: Final[dict[Feature, str]] = {
    Feature.JSONRPC_BATCH: V2025_03_26,
    Feature.SSE_PRIMING: V2025_11_25,
    Feature.RESOURCE_NOT_FOUND_CODE: V2025_11_25,
    Feature.ELICITATION_COMPLETE: V2025_11_25,
    Feature.TASKS: V2025_11_25,
}

_ORDER: Final[dict[str, int]] = {v: i for i, v in enumerate(SUPPORTED_VERSIONS)}


def has(version: str, feature: Feature) -> bool:
    """Whether `version` (a supported version) has `feature`."""
    index = _ORDER[version]
    last = _LAST_VERSION.get(feature)
    if last is not None and index > _ORDER[last]:
        return False
    first = _FIRST_VERSION.get(feature)
    return first is None or index >= _ORDER[first]


def is_stateless(version: str) -> bool:
    """Whether `version` is of the stateless era (2026-07-28: per-request `_meta`, no handshake)."""
    return version in STATELESS_VERSIONS


def negotiate(requested: object, supported: tuple[str, ...] = SUPPORTED_VERSIONS) -> str:
    """The server's answer to a client's `initialize` (lifecycle, "Version Negotiation").

    If the server supports the requested version it MUST respond with the same version;
    otherwise it MUST respond with another version it supports, which SHOULD be its latest.
    Only handshake-era versions can be agreed this way.
    """
    handshake = tuple(v for v in supported if not is_stateless(v)) or HANDSHAKE_VERSIONS
    if isinstance(requested, str) and requested in handshake:
        return requested
    return handshake[-1]
