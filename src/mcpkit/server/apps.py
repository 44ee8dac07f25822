"""MCP Apps on a server (`io.modelcontextprotocol/ui`, SEP-1865): views as `ui://` resources.

    add_view(server, "ui://weather/dashboard", html, csp={"connectDomains": ["https://api.example"]})

    @server.tool(meta=tool_ui("ui://weather/dashboard"))
    def weather(city: str) -> str: ...

The server declares the extension; a tool linked to a view still answers with text content, which
a host without MCP Apps shows instead (ctx.client_capabilities tells whether this one renders views:
protocol.apps.host_renders_apps).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.apps import APP_MIME, UI_EXTENSION, view_meta
from ..protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from .server import Server

__all__ = ["add_view"]


def add_view(
    server: Server,
    uri: str,
    html: str,
    *,
    name: str | None = None,
    description: str | None = None,
    csp: dict[str, list[str]] | None = None,
    permissions: tuple[str, ...] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> None:
    """Serve the HTML view at `uri` (a `ui://` URI) and declare the extension; ValueError for
    another scheme or an unknown CSP key or permission."""
    if not uri.startswith("ui://"):
        raise ValueError(f"a view's URI must use the ui:// scheme, not {uri!r}")
    meta = view_meta(csp, permissions, domain, prefers_border)
    content: JSON = {"text": html, **({"_meta": meta} if meta else {})}
    label = name or uri.removeprefix("ui://")

    def read() -> JSON:
        return content

    server.add_resource(uri, read, name=label, description=description, mime_type=APP_MIME)
    server.extension(UI_EXTENSION)
