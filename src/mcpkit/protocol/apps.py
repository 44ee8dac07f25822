"""MCP Apps (the extension `io.modelcontextprotocol/ui`, SEP-1865): interactive HTML views a server
ships as `ui://` resources and links to tools. No I/O here.

A view is a resource with a `ui://` URI and the MIME type `text/html;profile=mcp-app`, its security
and rendering wishes in the contents' `_meta.ui` (csp, permissions, domain, prefersBorder). A tool
names its view in `_meta.ui.resourceUri`, and who may call it in `_meta.ui.visibility` ("model",
"app"; both when absent). A host declares support with `mimeTypes` in its extension settings.
"""

from __future__ import annotations

from typing import Final

from .extensions import settings_of
from .jsonrpc import JSON

__all__ = [
    "APP_MIME",
    "UI_EXTENSION",
    "host_renders_apps",
    "host_settings",
    "tool_ui",
    "view_meta",
    "visible_to",
]

UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
APP_MIME: Final = "text/html;profile=mcp-app"
VISIBILITY: Final = ("model", "app")
_CSP_KEYS: Final = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite", "tools")  # tools: WebMCP


def host_settings(*mime_types: str) -> JSON:
    """A host's extension settings: the view MIME types it renders (MCP Apps' by default)."""
    return {"mimeTypes": list(mime_types or (APP_MIME,))}


def host_renders_apps(client_capabilities: JSON) -> bool:
    """Whether the client declared the extension with MCP Apps' MIME type among its `mimeTypes`."""
    settings = settings_of(client_capabilities, UI_EXTENSION)
    types = settings.get("mimeTypes") if settings is not None else None
    return isinstance(types, list) and APP_MIME in types


def tool_ui(resource_uri: str, visibility: tuple[str, ...] = VISIBILITY) -> JSON:
    """A tool's `_meta` linking it to the view at `resource_uri`; ValueError for a bad link."""
    if not resource_uri.startswith("ui://"):
        raise ValueError(f"a view's URI must use the ui:// scheme, not {resource_uri!r}")
    if not visibility or not set(visibility) <= set(VISIBILITY):
        raise ValueError(f"visibility must name 'model' and/or 'app', not {visibility!r}")
    ui: JSON = {"resourceUri": resource_uri}
    if tuple(visibility) != VISIBILITY:
        ui["visibility"] = list(visibility)
    return {"ui": ui}


def view_meta(
    csp: dict[str, list[str]] | None = None,
    permissions: tuple[str, ...] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> JSON:
    """The `_meta` of a view's contents: `{"ui": {...}}` with only what was given; ValueError for a
    CSP key or permission the extension does not define."""
    unknown = [k for k in csp or {} if k not in _CSP_KEYS] + [p for p in permissions if p not in _PERMISSIONS]
    if unknown:
        raise ValueError(f"not a view CSP key or permission: {', '.join(unknown)}")
    ui: JSON = {}
    if csp:
        ui["csp"] = {key: list(domains) for key, domains in csp.items()}
    if permissions:
        ui["permissions"] = {name: {} for name in permissions}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = prefers_border
    return {"ui": ui} if ui else {}


def visible_to(tool: JSON, audience: str) -> bool:
    """Whether `audience` ("model" or "app") may see and call `tool` (hosts hide app-only tools
    from the model, and refuse an app's call to a model-only tool)."""
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return audience in visibility if isinstance(visibility, list) else True
