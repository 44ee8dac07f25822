"""MCP Apps checked against its spec repository's schema: what mcpkit's Server and Client put on the
wire for `io.modelcontextprotocol/ui` (a tool's `_meta.ui`, a view's contents `_meta.ui`, the host's
extension settings as the server received them) must satisfy the definitions vendored from
modelcontextprotocol/ext-apps in tests/spec/ext-apps-schema.json, in both eras."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from mcpkit import Context, Server
from mcpkit.protocol.apps import APP_MIME, UI_EXTENSION, host_settings, tool_ui, view_meta
from mcpkit.protocol.extensions import settings_of
from mcpkit.server.apps import add_view
from mcpkit.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
JSON = dict[str, Any]
ERAS = ["modern", "handshake"]
SCHEMA = Path(__file__).resolve().parents[1] / "spec" / "ext-apps-schema.json"
VIEW = "ui://board/main"


@functools.cache
def _schema() -> JSON:
    loaded: JSON = json.loads(SCHEMA.read_text())
    return loaded


def problems(definition: str, instance: Any) -> list[str]:
    schema = _schema()
    wrapper = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    check = jsonschema_rs.validator_for(wrapper)
    return [f"{definition}: {e.message} at {list(e.instance_path)}" for e in check.iter_errors(instance)]


def permissions_in_schema() -> tuple[str, ...]:
    return tuple(_schema()["$defs"]["McpUiResourcePermissions"]["properties"])


def build() -> Server:
    server = Server("apps-schema")
    add_view(
        server,
        VIEW,
        "<!DOCTYPE html><html><body>board</body></html>",
        csp={key: ["https://api.example"] for key in _schema()["$defs"]["McpUiResourceCsp"]["properties"]},
        permissions=permissions_in_schema(),
        domain="board.example",
        prefers_border=False,
    )

    @server.tool(meta=tool_ui(VIEW))
    def board(ctx: Context) -> JSON:
        return {"seen": settings_of(ctx.client_capabilities, UI_EXTENSION)}

    @server.tool(meta=tool_ui(VIEW, ("app",)))
    def refresh() -> str:
        return "ok"

    return server


@pytest.mark.parametrize("era", ERAS)
async def test_what_mcpkit_emits_for_mcp_apps_satisfies_the_ext_apps_schema(era: str) -> None:
    async with connect(build(), era=era, extensions={UI_EXTENSION: host_settings()}) as client:
        tools = {t["name"]: t for t in await client.list_all_tools()}
        for tool in tools.values():
            assert problems("McpUiToolMeta", tool["_meta"]["ui"]) == []
        assert tools["refresh"]["_meta"]["ui"]["visibility"] == ["app"]
        [content] = (await client.read_resource(VIEW))["contents"]
        assert content["mimeType"] == APP_MIME
        assert set(content["_meta"]["ui"]) == {"csp", "permissions", "domain", "prefersBorder"}
        assert problems("McpUiResourceMeta", content["_meta"]["ui"]) == []
        seen = (await client.call_tool("board", {}))["structuredContent"]["seen"]
        assert seen == {"mimeTypes": [APP_MIME]}  # the host's settings as the server received them
        assert problems("McpUiClientCapabilities", seen) == []


def test_the_vendored_schema_refuses_what_the_extension_does_not_allow() -> None:
    assert problems("McpUiToolMeta", {"resourceUri": VIEW, "csp": {}}) != []  # csp belongs on the view
    assert problems("McpUiToolMeta", {"resourceUri": VIEW, "visibility": ["user"]}) != []
    assert problems("McpUiResourceMeta", {"csp": {"scriptDomains": []}}) != []
    assert problems("McpUiClientCapabilities", {"mimeTypes": APP_MIME}) != []


def test_every_permission_and_csp_key_the_schema_defines_can_be_asked_for() -> None:
    csp_keys = tuple(_schema()["$defs"]["McpUiResourceCsp"]["properties"])
    meta = view_meta({key: [] for key in csp_keys}, permissions_in_schema())
    assert problems("McpUiResourceMeta", meta["ui"]) == []
    assert set(meta["ui"]["permissions"]) == set(permissions_in_schema())
