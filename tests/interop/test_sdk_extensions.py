"""The official SDK's client (`mcp` 2.x) against an mcpkit server declaring extensions, over Streamable
HTTP in both eras (initialize; server/discover at 2026-07-28).

The SDK sees `capabilities.extensions` (skills with directoryRead, MCP Apps, a custom one) and declares
its own (`ClientSession(extensions=...)`: in initialize, and per request in 2026-07-28), which the -32021
gate of an extension that requires it checks. The SDK has no skills API: skills/list, skills/get and
resources/directory/read go through its generic `send_request` with typed Request models, and the skill's
files through `read_resource`; the digest, size and frontmatter are checked here with mcpkit's helpers.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, types  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from pydantic import BaseModel, ConfigDict  # noqa: E402

import peers  # noqa: E402
from mcpkit import Context, Server  # noqa: E402
from mcpkit.protocol.apps import UI_EXTENSION, tool_ui  # noqa: E402
from mcpkit.protocol.skills import SKILLS_EXTENSION, digest, frontmatter  # noqa: E402
from mcpkit.server.apps import add_view  # noqa: E402
from mcpkit.transports.http_server import StreamableHTTPApp  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.anyio, pytest.mark.filterwarnings("ignore::UserWarning")]
JSON = dict[str, Any]
SEARCH = "io.example/search"
SKILL_MD = "---\nname: notes\ndescription: Keep notes tidy\n---\n# Notes\nSee templates/daily.md\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Open(BaseModel):
    """Any result object, kept whole (the SDK types only the core's results)."""

    model_config = ConfigDict(extra="allow")


async def raw(session: ClientSession, request: types.Request[Any, Any]) -> JSON:
    return (await session.send_request(request, Open)).model_dump()


class UriParams(types.RequestParams):
    uri: str


class SearchParams(types.RequestParams):
    q: str


class SkillsList(types.Request[types.PaginatedRequestParams, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class SkillsGet(types.Request[UriParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class DirectoryRead(types.Request[UriParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


class SearchRun(types.Request[SearchParams, Literal["search/run"]]):
    method: Literal["search/run"] = "search/run"


def build(root: Path) -> Server:
    folder = root / "notes"
    (folder / "templates").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "templates" / "daily.md").write_text("# Daily\n")
    server = Server("ext-server")
    server.skill(folder)
    search = server.extension(SEARCH, {"maxResults": 5}, require_client=True)

    @search.method("search/run")
    def run(params: JSON, ctx: Context) -> JSON:
        return {"hits": [params.get("q")]}

    add_view(server, "ui://notes/board", "<!DOCTYPE html><html><body>notes</body></html>")

    @server.tool(meta=tool_ui("ui://notes/board"))
    def board() -> str:
        return "the board"

    return server


@asynccontextmanager
async def sdk_session(url: str, era: str, extensions: dict[str, JSON] | None) -> AsyncIterator[ClientSession]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with (
            streamable_http_client(url) as streams,
            ClientSession(streams[0], streams[1], extensions=extensions) as session,
        ):
            await (session.initialize() if era == "initialize" else session.discover())
            yield session


def capabilities(session: ClientSession) -> types.ServerCapabilities:
    result = session.initialize_result or session.discover_result
    assert result is not None
    return result.capabilities


@pytest.mark.parametrize("era", ["initialize", "discover"])
async def test_the_sdk_client_sees_the_extensions_and_reads_a_skill(era: str, tmp_path: Path) -> None:
    async with (
        peers.serving(StreamableHTTPApp(build(tmp_path))) as url,
        sdk_session(url, era, {SEARCH: {}}) as session,
    ):
        assert session.protocol_version == ("2025-11-25" if era == "initialize" else "2026-07-28")
        declared = capabilities(session).extensions
        assert declared == {
            SKILLS_EXTENSION: {"directoryRead": True},
            SEARCH: {"maxResults": 5},
            UI_EXTENSION: {},
        }
        [entry] = (await raw(session, SkillsList(params=types.PaginatedRequestParams())))["skills"]
        got = await raw(session, SkillsGet(params=UriParams(uri=entry["uri"])))
        assert got["skill"] == entry
        read = await session.read_resource(entry["uri"])
        [content] = read.contents
        assert isinstance(content, types.TextResourceContents) and content.text == SKILL_MD
        [listed] = [r for r in entry["resources"] if r["uri"] == entry["uri"]]
        assert (listed["digest"], listed["size"]) == (digest(SKILL_MD.encode()), len(SKILL_MD.encode()))
        assert frontmatter(content.text) == entry["frontmatter"]
        folder = await raw(session, DirectoryRead(params=UriParams(uri="skill://notes/templates")))
        assert [r["uri"] for r in folder["resources"]] == ["skill://notes/templates/daily.md"]
        searched = await raw(session, SearchRun(params=SearchParams(q="mcp")))
        assert searched["hits"] == ["mcp"]  # the SDK declared io.example/search, which it requires
        [tool] = (await session.list_tools()).tools
        assert tool.meta == {"ui": {"resourceUri": "ui://notes/board"}}


@pytest.mark.parametrize("era", ["initialize", "discover"])
async def test_an_sdk_client_that_does_not_declare_a_required_extension_gets_32021(
    era: str, tmp_path: Path
) -> None:
    async with (
        peers.serving(StreamableHTTPApp(build(tmp_path))) as url,
        sdk_session(url, era, None) as session,
    ):
        with pytest.raises(MCPError) as refused:
            await raw(session, SearchRun(params=SearchParams(q="mcp")))
        assert refused.value.error.code == -32021
