"""Finding the user's existing client configs: the first that names any server is used.

Project files first (this directory: Claude Code's `.mcp.json`, Cursor's `.cursor/mcp.json`, VS Code's
`.vscode/mcp.json`), then the user's (Claude Code's `~/.claude.json`, Cursor's `~/.cursor/mcp.json`,
VS Code's user `mcp.json`, Claude Desktop's `claude_desktop_config.json`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import orjson

from .config import ConfigError, GroupConfig, parse_config

__all__ = ["candidates", "discover"]


def _app_dirs(home: Path) -> list[Path]:
    if sys.platform == "darwin":
        return [home / "Library" / "Application Support"]
    if sys.platform == "win32":
        return [Path(os.environ.get("APPDATA", home / "AppData" / "Roaming"))]
    return [Path(os.environ.get("XDG_CONFIG_HOME", home / ".config"))]


def candidates(cwd: Path, home: Path) -> list[tuple[str, Path]]:
    """(client, path) in the order they are tried."""
    found = [
        ("Claude Code (project)", cwd / ".mcp.json"),
        ("Cursor (project)", cwd / ".cursor" / "mcp.json"),
        ("VS Code (workspace)", cwd / ".vscode" / "mcp.json"),
        ("Claude Code", home / ".claude.json"),
        ("Cursor", home / ".cursor" / "mcp.json"),
    ]
    for base in _app_dirs(home):
        found.append(("VS Code", base / "Code" / "User" / "mcp.json"))
        found.append(("Claude Desktop", base / "Claude" / "claude_desktop_config.json"))
    return found


def _servers_of(client: str, data: Any, cwd: Path) -> Any:
    """Claude Code keeps project servers in ~/.claude.json under projects[<dir>] as well."""
    if not isinstance(data, dict):
        return data
    if client == "Claude Code" and not data.get("mcpServers"):
        project = (data.get("projects") or {}).get(str(cwd))
        if isinstance(project, dict) and project.get("mcpServers"):
            return {"mcpServers": project["mcpServers"]}
    return data


def discover(cwd: Path | None = None, home: Path | None = None) -> GroupConfig | None:
    """The first client config naming a server, its `source` saying which client's file it is."""
    cwd, home = cwd or Path.cwd(), home or Path.home()
    for client, path in candidates(cwd, home):
        if not path.is_file():
            continue
        try:
            data = _servers_of(client, orjson.loads(path.read_bytes()), cwd)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"{path} ({client}): not JSON: {exc}") from None
        if not isinstance(data, dict) or not (data.get("mcpServers") or data.get("servers")):
            continue
        return parse_config(data, f"{path} ({client})")
    return None
