"""The optional fields every primitive shares, each sent only to versions that have it."""

from __future__ import annotations

from ..protocol.jsonrpc import JSON
from ..protocol.versions import Feature, has

__all__ = ["add_common_fields"]


def add_common_fields(
    out: JSON, version: str, *, title: str | None, icons: list[JSON] | None, meta: JSON | None
) -> JSON:
    if title is not None and has(version, Feature.TITLES):
        out["title"] = title
    if icons and has(version, Feature.ICONS):
        out["icons"] = icons
    if meta is not None and has(version, Feature.META_ON_TYPES):
        out["_meta"] = meta
    return out
