"""`mcpkit list|call|search --config mcp.json`, and the client config found without --config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[2]
GROUP_SERVER = str(ROOT / "tests" / "client" / "group_server.py")
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def server(name: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [GROUP_SERVER, name], "env": {"PYTHONPATH": str(ROOT / "src")}}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    servers = {"a": server("a"), "b": server("b"), "never": {"command": str(tmp_path / "missing")}}
    path.write_bytes(orjson.dumps({"mcpServers": servers, "mcpkit": {"tools": {"deny": ["*.crash"]}}}))
    return path


def mcpkit(*words: str, cwd: Path = ROOT, env: dict[str, str] = ENV) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit.cli", *words, "--timeout", "20"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_list_shows_every_server_tools_namespaced_and_reports_the_broken_one(config: Path) -> None:
    done = mcpkit("list", "--config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    names = [tool["name"] for tool in orjson.loads(done.stdout)]
    assert {"a.whoami", "a.add", "b.whoami", "b.grow"} <= set(names)
    assert "a.crash" not in names
    assert "server never is down: FileNotFoundError" in done.stderr


def test_list_prompts_as_a_table(config: Path) -> None:
    done = mcpkit("list", "prompts", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "a.hello" in done.stdout and "b.hello" in done.stdout


def test_call_routes_to_its_server_and_starts_only_that_one(config: Path) -> None:
    done = mcpkit("call", "--config", str(config), "b.add", "a=2", "b=3")
    assert (done.returncode, done.stdout) == (0, '{"result":5}\n'), done.stderr
    assert "never" not in done.stderr
    who = mcpkit("call", "--config", str(config), "a.whoami")
    assert who.stdout.startswith("a "), who.stderr


def test_call_of_an_unknown_or_filtered_tool_is_a_usage_error_with_suggestions(config: Path) -> None:
    done = mcpkit("call", "--config", str(config), "a.ad", "a=1")
    assert done.returncode == 2
    assert "no tool 'a.ad'" in done.stderr and "a.add" in done.stderr
    assert mcpkit("call", "--config", str(config), "a.crash").returncode == 2


def test_call_to_a_server_that_is_down_is_a_connection_error_saying_why(config: Path) -> None:
    done = mcpkit("call", "--config", str(config), "never.anything")
    assert done.returncode == 3
    assert "server 'never' is down: FileNotFoundError" in done.stderr


def test_search_ranks_the_tools_of_every_server(config: Path) -> None:
    done = mcpkit("search", "--config", str(config), "which process answered", "--json", "--limit", "2")
    assert done.returncode == 0, done.stderr
    assert {tool["name"] for tool in orjson.loads(done.stdout)} == {"a.whoami", "b.whoami"}


def test_without_config_the_client_config_found_is_used_and_named(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_bytes(orjson.dumps({"mcpServers": {"p": server("p")}}))
    env = {**ENV, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    done = mcpkit("search", "add integers", "--json", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)[0]["name"] == "p.add"
    assert f"using {project / '.mcp.json'} (Claude Code (project))" in done.stderr
    call = mcpkit("call", "p.add", "a=1", "b=2", cwd=project, env=env)  # SERVER.TOOL is no command
    assert (call.returncode, call.stdout) == (0, '{"result":3}\n'), call.stderr
    listed = mcpkit("list", "--json", cwd=project, env=env)
    assert "p.whoami" in {tool["name"] for tool in orjson.loads(listed.stdout)}, listed.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    bare = {**env, "HOME": str(empty), "XDG_CONFIG_HOME": str(empty)}
    nothing = mcpkit("search", "add", cwd=empty, env=bare)
    assert nothing.returncode == 2 and "no client config found" in nothing.stderr


def test_only_words_that_name_no_server_are_taken_for_a_config_command(tmp_path: Path) -> None:
    from mcpkit.cli.group import wants_group

    script = tmp_path / "srv.py"
    script.write_text("")
    assert wants_group(["call", "github.create_issue", "title=x"])
    assert wants_group(["list"]) and wants_group(["list", "--json"]) and wants_group(["search", "q"])
    assert wants_group(["list", "prompts", "--timeout", "5"]) and not wants_group(["list", "--help"])
    assert wants_group(["call", "--config", "mcp.json", "a.b"])
    assert not wants_group(["call", "python3", "add"])
    assert not wants_group(["call", str(script), "add"]) and not wants_group(["call", "server.py", "add"])
    assert not wants_group(["call", "http://x.example/mcp", "add"])
    assert not wants_group(["list", "http://127.0.0.1:8000/mcp"]) and not wants_group(["serve", "--config"])


def test_a_broken_config_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"x": {"args": []}}}')
    done = mcpkit("list", "--config", str(path))
    assert done.returncode == 2 and "server 'x': give a command (stdio) or a url (HTTP)" in done.stderr
    path.write_text("{not json")
    assert "not JSON" in mcpkit("list", "--config", str(path)).stderr
