"""MCP Apps on a client (`io.modelcontextprotocol/ui`, SEP-1865): the view a tool links to.

async with connect_http(url, extensions={UI_EXTENSION: host_settings()}) as client:
    tools = [t for t in await client.list_all_tools() if visible_to(t, "model")]
    view = await view_for(client, tools[0])   # {"uri", "html", "meta"} or None
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from ..protocol.apps import APP_MIME
from ..protocol.errors import INVALID_PARAMS, RemoteError
from ..protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from .client import Client

__all__ = ["view_for"]


async def view_for(client: Client, tool: JSON) -> JSON | None:
    """The HTML view `tool` links to (`_meta.ui.resourceUri`), read with resources/read; None for a
    tool without one. RemoteError (-32602) when the server's answer is not an MCP Apps view."""
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    if not isinstance(uri, str):
        return None
    if not uri.startswith("ui://"):
        raise RemoteError(INVALID_PARAMS, f"the tool's view {uri!r} is not a ui:// resource")
    contents = (await client.read_resource(uri)).get("contents")
    listed = contents if isinstance(contents, list) else []
    item = next((c for c in listed if isinstance(c, dict) and c.get("uri") == uri), None)
    if item is None or item.get("mimeType") != APP_MIME:
        raise RemoteError(INVALID_PARAMS, f"{uri} is not served as {APP_MIME}")
    return {"uri": uri, "html": _html(item, uri), "meta": item.get("_meta") or {}}


def _html(item: JSON, uri: str) -> str:
    if isinstance(item.get("text"), str):
        return str(item["text"])
    try:
        return base64.b64decode(str(item.get("blob")), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise RemoteError(INVALID_PARAMS, f"{uri}: the view is neither text nor base64 HTML") from exc
