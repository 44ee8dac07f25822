"""Builders for MCP content blocks (server "Tools", "Resources", "Prompts": content types).

Each returns the plain wire dict, so a result can be built without any wrapper objects; `_meta`
and annotations are passed through untouched.
"""

import base64
from typing import Any

__all__ = ["annotations", "audio", "embedded_blob", "embedded_text", "image", "resource_link", "text"]

JSON = dict[str, Any]


def _finish(block: JSON, annotations: JSON | None, meta: JSON | None) -> JSON:
    if annotations:
        block["annotations"] = annotations
    if meta is not None:
        block["_meta"] = meta
    return block


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def annotations(
    audience: list[str] | None = None, priority: float | None = None, last_modified: str | None = None
) -> JSON:
    """Annotations: `audience` of "user"/"assistant", `priority` in 0..1, ISO 8601 `last_modified`."""
    if priority is not None and not 0 <= priority <= 1:
        raise ValueError("priority must be between 0 and 1")
    out: JSON = {}
    if audience is not None:
        out["audience"] = audience
    if priority is not None:
        out["priority"] = priority
    if last_modified is not None:
        out["lastModified"] = last_modified
    return out


def text(value: str, *, annotations: JSON | None = None, meta: JSON | None = None) -> JSON:
    return _finish({"type": "text", "text": value}, annotations, meta)


def image(
    data: bytes | str, mime_type: str, *, annotations: JSON | None = None, meta: JSON | None = None
) -> JSON:
    """An image; `data` is raw bytes or already base64-encoded text."""
    return _finish({"type": "image", "data": _b64(data), "mimeType": mime_type}, annotations, meta)


def audio(
    data: bytes | str, mime_type: str, *, annotations: JSON | None = None, meta: JSON | None = None
) -> JSON:
    return _finish({"type": "audio", "data": _b64(data), "mimeType": mime_type}, annotations, meta)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: JSON | None = None,
    meta: JSON | None = None,
) -> JSON:
    block: JSON = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (
        ("title", title),
        ("description", description),
        ("mimeType", mime_type),
        ("size", size),
    ):
        if value is not None:
            block[key] = value
    return _finish(block, annotations, meta)


def embedded_text(
    uri: str,
    value: str,
    mime_type: str | None = None,
    *,
    annotations: JSON | None = None,
    meta: JSON | None = None,
) -> JSON:
    resource: JSON = {"uri": uri, "text": value}
    if mime_type:
        resource["mimeType"] = mime_type
    return _finish({"type": "resource", "resource": resource}, annotations, meta)


def embedded_blob(
    uri: str,
    data: bytes | str,
    mime_type: str | None = None,
    *,
    annotations: JSON | None = None,
    meta: JSON | None = None,
) -> JSON:
    resource: JSON = {"uri": uri, "blob": _b64(data)}
    if mime_type:
        resource["mimeType"] = mime_type
    return _finish({"type": "resource", "resource": resource}, annotations, meta)
