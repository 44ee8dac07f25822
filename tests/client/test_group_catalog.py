"""The group's pure parts: config files, names, collisions, filters, search, template routing, discovery."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit.client.group.catalog import build_catalog
from mcpkit.client.group.config import ConfigError, HttpServer, StdioServer, load_config, parse_config
from mcpkit.client.group.discovery import discover
from mcpkit.client.group.filters import Filters, Rule
from mcpkit.client.group.names import Naming, NamingError, valid_tool_name
from mcpkit.client.group.search import ToolIndex, terms
from mcpkit.client.group.templates import template_matches

JSON = dict[str, Any]


def tool(name: str, description: str = "", **params: str) -> JSON:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    }


LISTS: dict[str, dict[str, list[JSON]]] = {
    "files": {
        "tools": [tool("read"), tool("write"), tool("delete_all")],
        "prompts": [{"name": "review"}],
        "resources": [{"uri": "file:///a.txt", "name": "a"}],
        "resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "any"}],
    },
    "web": {"tools": [tool("read"), tool("fetch")], "resources": [{"uri": "file:///a.txt", "name": "dup"}]},
}
NO_FILTERS = {"files": Filters(), "web": Filters()}


def names(catalog_tools: dict[str, Any]) -> list[str]:
    return list(catalog_tools)


def test_every_name_is_prefixed_with_its_server_and_keeps_the_server_own_name() -> None:
    catalog = build_catalog(LISTS, Naming(), NO_FILTERS, Filters())
    assert names(catalog.tools) == ["files.read", "files.write", "files.delete_all", "web.read", "web.fetch"]
    entry = catalog.tools["web.read"]
    assert (entry.server, entry.original, entry.definition["name"]) == ("web", "read", "web.read")
    assert list(catalog.prompts) == ["files.review"]


def test_a_custom_separator_names_and_splits() -> None:
    naming = Naming(separator="__")
    catalog = build_catalog(LISTS, naming, NO_FILTERS, Filters())
    assert "files__read" in catalog.tools
    assert naming.split("files__delete_all") == ("files", "delete_all")
    assert naming.split("plain") is None


def test_server_names_may_not_hold_the_separator_so_prefixes_never_overlap() -> None:
    with pytest.raises(NamingError):
        Naming().check_server("my.server")
    with pytest.raises(NamingError):
        Naming(separator="_").check_server("my_server")
    with pytest.raises(NamingError):
        Naming().check_server("has space")
    Naming(separator="_").check_server("my.server")


def test_a_separator_or_policy_outside_the_rules_is_refused() -> None:
    with pytest.raises(NamingError):
        Naming(separator="/")
    with pytest.raises(NamingError):
        Naming(collisions="last")


def test_tool_names_follow_the_spec_rules() -> None:
    """2025-11-25 server/tools "Tool Names": 1-128 of A-Z a-z 0-9 _ - ."""
    assert all(valid_tool_name(n) for n in ("getUser", "DATA_EXPORT_v2", "admin.tools.list", "a" * 128))
    assert not any(valid_tool_name(n) for n in ("", "a" * 129, "has space", "a,b", "a/b", "é"))


def test_a_prefixed_name_over_128_characters_or_with_bad_characters_is_left_out_and_reported() -> None:
    lists = {"s": {"tools": [tool("x" * 127), tool("bad name"), tool("ok")]}}
    catalog = build_catalog(lists, Naming(), {"s": Filters()}, Filters())
    assert list(catalog.tools) == ["s.ok"]
    assert len(catalog.problems) == 2 and all("tool-name rules" in p for p in catalog.problems)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("prefix", ["files.read", "write", "delete_all", "web.read", "fetch"]),
        ("first", ["read", "write", "delete_all", "fetch"]),
    ],
)
def test_bare_names_settle_collisions_by_policy(policy: str, expected: list[str]) -> None:
    catalog = build_catalog(LISTS, Naming(prefix=False, collisions=policy), NO_FILTERS, Filters())
    assert names(catalog.tools) == expected
    if policy == "first":
        assert catalog.tools["read"].server == "files"
        assert any("'read' is hidden by files's" in p for p in catalog.problems)


def test_the_error_policy_refuses_a_collision() -> None:
    with pytest.raises(NamingError, match="'read'"):
        build_catalog(LISTS, Naming(prefix=False, collisions="error"), NO_FILTERS, Filters())


def test_a_uri_two_servers_list_goes_to_the_first_and_is_reported() -> None:
    catalog = build_catalog(LISTS, Naming(), NO_FILTERS, Filters())
    assert catalog.resources["file:///a.txt"].server == "files"
    assert any("file:///a.txt" in p for p in catalog.problems)
    assert [t.name for t in catalog.templates] == ["file:///{path}"]


def test_server_filters_match_own_names_and_group_filters_match_catalog_names() -> None:
    server_filters = {"files": Filters.of(tools={"deny": ["delete*"]}), "web": Filters()}
    group = Filters.of(tools={"allow": ["files.*", "web.fetch"]}, resources={"deny": ["file:///{*"]})
    catalog = build_catalog(LISTS, Naming(), server_filters, group)
    assert names(catalog.tools) == ["files.read", "files.write", "web.fetch"]
    assert catalog.templates == [] and list(catalog.resources) == ["file:///a.txt"]


def test_filters_cover_prompts_and_are_case_sensitive() -> None:
    assert not Rule(deny=("rev*",)).admits("review") and Rule(deny=("Rev*",)).admits("review")
    catalog = build_catalog(LISTS, Naming(), NO_FILTERS, Filters.of(prompts={"deny": ["*.review"]}))
    assert catalog.prompts == {}


def test_a_config_file_gives_stdio_and_http_servers_filters_and_settings(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "files": {
                "command": "npx",
                "args": ["-y", "server-files", "${HOME_DIR:-/srv}"],
                "env": {"TOKEN": "${GROUP_TEST_TOKEN}"},
                "cwd": "/tmp",
                "tools": {"deny": ["delete*"]},
            },
            "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
            "off": {"command": "nothing", "disabled": True},
        },
        "mcpkit": {"separator": "__", "prefix": True, "collisions": "first", "tools": {"allow": ["*"]}},
    }
    path = tmp_path / "mcp.json"
    path.write_bytes(orjson.dumps(config))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GROUP_TEST_TOKEN", "s3cret")
        loaded = load_config(path)
    files = loaded.servers["files"]
    assert isinstance(files, StdioServer)
    assert files.argv == ["npx", "-y", "server-files", "/srv"] and files.env == {"TOKEN": "s3cret"}
    assert files.cwd == "/tmp" and not files.filters.admits("tools", "delete_x")
    assert loaded.servers["remote"] == HttpServer("https://example.com/mcp", {"X-Key": "k"})
    assert list(loaded.servers) == ["files", "remote"]
    assert (loaded.separator, loaded.collisions, loaded.source) == ("__", "first", str(path))


def test_an_http_server_may_ask_for_oauth_with_or_without_a_registered_client() -> None:
    servers = {
        "a": {"url": "https://a.example/mcp", "oauth": True},
        "b": {"url": "https://b.example/mcp", "oauth": {"clientId": "id", "clientSecret": "s"}},
        "c": {"url": "https://c.example/mcp"},
    }
    config = parse_config({"mcpServers": servers})
    assert [getattr(s, "oauth", "-") for s in config.servers.values()] == [
        {},
        {"clientId": "id", "clientSecret": "s"},
        None,
    ]
    with pytest.raises(ConfigError, match="oauth is true or"):
        parse_config({"mcpServers": {"x": {"url": "https://x/mcp", "oauth": "yes"}}})


def test_vs_code_servers_key_and_variables_are_read_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROUP_TEST_KEY", "k1")
    args = ["${workspaceFolder}/x", "${env:GROUP_TEST_KEY}"]
    entry: JSON = {"type": "stdio", "command": "srv", "args": args, "env": {"TOKEN": "${input:token}"}}
    config = parse_config({"servers": {"s": entry}})
    assert config.servers["s"] == StdioServer("srv", (f"{Path.cwd()}/x", "k1"), {"TOKEN": "${input:token}"})


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"args": ["x"]}, "give a command"),
        ({"url": "ftp://x"}, "http:// or https://"),
        ({"command": "x", "args": "not a list"}, "args must be a list"),
        ({"command": "x", "env": {"A": 1}}, "env must be an object of strings"),
        ({"command": "x", "tools": {"allow": "read"}}, "list of glob strings"),
        ({"command": "x", "tools": {"only": []}}, "allow"),
        ({"command": "${GROUP_TEST_UNSET_VARIABLE}"}, "is not set"),
    ],
)
def test_a_bad_entry_is_refused_with_its_server_name(entry: JSON, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_config({"mcpServers": {"bad": entry}})
    assert "'bad'" in str(caught.value)


def test_a_file_without_servers_is_refused() -> None:
    with pytest.raises(ConfigError, match="mcpServers"):
        parse_config({"other": {}})


def test_search_ranks_by_name_title_description_and_parameters() -> None:
    tools = [
        tool("github.create_issue", "Open a new issue in a repository", title="t", body="Issue text"),
        tool("github.list_issues", "List the issues of a repository"),
        tool("files.read_file", "Read a file from disk", path="Where the file is"),
        tool("weather.forecast", "Tomorrow's weather for a city", city="City name"),
    ]
    index = ToolIndex(tools)
    assert [t["name"] for t in index.search("create an issue", 2)] == [
        "github.create_issue",
        "github.list_issues",
    ]
    assert index.search("read a file")[0]["name"] == "files.read_file"
    assert index.search("forecast for city")[0]["name"] == "weather.forecast"
    assert index.search("zzz unknown") == []


def test_terms_split_names_the_way_people_write_them() -> None:
    assert terms("getUserProfile") == ["user", "profile"]
    assert terms("create_issue-v2.HTTPServer") == ["create", "issue", "v", "2", "http", "server"]
    assert terms("issues") == terms("issue")


def test_search_over_thousands_of_tools_takes_milliseconds() -> None:
    tools = [
        tool(f"s{i % 40}.tool_{i}", f"Does thing number {i} with widgets and gadgets") for i in range(3000)
    ]
    index = ToolIndex(tools)
    start = time.perf_counter()
    for _ in range(20):
        index.search("thing 1234 widgets")
    assert (time.perf_counter() - start) / 20 < 0.05
    assert index.search("thing 1234 widgets")[0]["name"] == "s34.tool_1234"


@pytest.mark.parametrize(
    ("template", "uri", "matches"),
    [
        ("group://a/notes/{note}", "group://a/notes/5", True),
        ("group://a/notes/{note}", "group://a/notes/5/6", False),
        ("file:///{+path}", "file:///a/b/c.txt", True),
        ("search://q{?term,limit}", "search://q?term=x", True),
        ("search://q{?term,limit}", "search://r", False),
    ],
)
def test_a_uri_no_server_listed_is_routed_by_template(template: str, uri: str, matches: bool) -> None:
    assert template_matches(template, uri) is matches


def test_discovery_takes_the_first_client_config_naming_a_server(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".cursor").mkdir(parents=True)
    (project / ".vscode").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_bytes(orjson.dumps({"mcpServers": {"c": {"command": "c"}}}))
    (project / ".vscode" / "mcp.json").write_bytes(orjson.dumps({"servers": {}}))
    found = discover(project, home)
    assert found is not None and list(found.servers) == ["c"] and "Cursor" in (found.source or "")
    (project / ".mcp.json").write_bytes(orjson.dumps({"mcpServers": {"p": {"url": "http://x/mcp"}}}))
    found = discover(project, home)
    assert (
        found is not None and list(found.servers) == ["p"] and "Claude Code (project)" in (found.source or "")
    )


def test_discovery_reads_claude_code_project_servers_and_finds_none_in_an_empty_home(
    tmp_path: Path,
) -> None:
    assert discover(tmp_path, tmp_path) is None
    claude = {"projects": {str(tmp_path): {"mcpServers": {"here": {"command": "h"}}}}}
    (tmp_path / ".claude.json").write_bytes(orjson.dumps(claude))
    found = discover(tmp_path, tmp_path)
    assert found is not None and list(found.servers) == ["here"]
