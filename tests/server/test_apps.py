"""MCP Apps (io.modelcontextprotocol/ui, SEP-1865) served by mcpkit's Server and read by its Client in
both eras: a ui:// view with the apps MIME type and its `_meta.ui`, a tool linked to it, visibility,
and the negotiation (the server declares the extension; the host declares the MIME types it renders)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.client.apps import view_for
from mcpkit.protocol.apps import APP_MIME, UI_EXTENSION, host_renders_apps, host_settings, tool_ui, visible_to
from mcpkit.server.apps import add_view
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = ["modern", "handshake"]
HTML = "<!DOCTYPE html><html><body>weather</body></html>"


def build() -> Server:
    server = Server("apps")
    add_view(
        server,
        "ui://weather/dashboard",
        HTML,
        csp={"connectDomains": ["https://api.example"]},
        prefers_border=True,
    )

    @server.tool(meta=tool_ui("ui://weather/dashboard"))
    def weather(city: str, ctx: Context) -> str:
        return f"sunny in {city}; views: {host_renders_apps(ctx.client_capabilities)}"

    @server.tool(meta=tool_ui("ui://weather/dashboard", ("app",)))
    def refresh() -> str:
        return "refreshed"

    return server


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_links_to_its_view_and_the_host_reads_it(era: str) -> None:
    async with connect(build(), era=era, extensions={UI_EXTENSION: host_settings()}) as client:
        assert UI_EXTENSION in client.server_capabilities["extensions"]
        tools = {t["name"]: t for t in await client.list_all_tools()}
        assert tools["weather"]["_meta"] == {"ui": {"resourceUri": "ui://weather/dashboard"}}
        assert [n for n, t in tools.items() if visible_to(t, "model")] == ["weather"]
        assert visible_to(tools["refresh"], "app")
        view = await view_for(client, tools["weather"])
        assert view is not None and view["html"] == HTML
        assert view["meta"] == {
            "ui": {"csp": {"connectDomains": ["https://api.example"]}, "prefersBorder": True}
        }
        listed = {r["uri"]: r for r in await client.list_all_resources()}
        assert listed["ui://weather/dashboard"]["mimeType"] == APP_MIME
        answer = await client.call_tool("weather", {"city": "Oslo"})
        assert (
            answer["content"][0]["text"] == "sunny in Oslo; views: True"
        )  # the text fallback is always there


@pytest.mark.parametrize("era", ERAS)
async def test_a_host_without_the_extension_is_told_apart(era: str) -> None:
    async with connect(build(), era=era) as client:
        answer = await client.call_tool("weather", {"city": "Oslo"})
        assert answer["content"][0]["text"].endswith("views: False")


def test_views_and_links_are_checked() -> None:
    with pytest.raises(ValueError):
        tool_ui("https://example.com/view")
    with pytest.raises(ValueError):
        tool_ui("ui://x", ("user",))
    with pytest.raises(ValueError):
        add_view(Server("x"), "ui://x", HTML, csp={"scriptDomains": ["https://x"]})
    assert not host_renders_apps({"extensions": {UI_EXTENSION: {"mimeTypes": ["text/plain"]}}})
