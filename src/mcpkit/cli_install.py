"""`mcpkit install CLIENT FILE`: add a server to the MCP config of a desktop or editor client.

The entry runs this Python by its absolute path (`python -m mcpkit serve /abs/file.py [-- args]`), so the
client starts the server with the packages of the environment mcpkit was installed in, whatever its own PATH.
Each client's file and format, as its documentation gives them:

- claude-desktop: claude_desktop_config.json in Claude's config directory (macOS ~/Library/Application
  Support/Claude, Windows %APPDATA%/Claude, else $XDG_CONFIG_HOME/Claude or ~/.config/Claude);
  `mcpServers: {name: {command, args, env}}`.
- claude-code: .mcp.json in the current directory (Claude Code's project scope); `mcpServers`, with
  `type: "stdio"`.
- cursor: ~/.cursor/mcp.json (every project); `mcpServers: {name: {command, args, env}}`.
- vscode: .vscode/mcp.json in the current directory (the workspace); `servers`, with `type: "stdio"`.

An existing file is kept whole but for the one entry, and copied to FILE.bak first; a file that is not a
JSON object is refused, unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cli_errors import UsageError
from .cli_serve import split_target

__all__ = ["CLIENTS", "add_install", "run_install"]


@dataclass(frozen=True)
class ClientConfig:
    title: str
    key: str  # the top-level object holding the servers
    typed: bool  # whether an entry names its transport ("type": "stdio")


CLIENTS = {
    "claude-desktop": ClientConfig("Claude Desktop", "mcpServers", typed=False),
    "claude-code": ClientConfig("Claude Code", "mcpServers", typed=True),
    "cursor": ClientConfig("Cursor", "mcpServers", typed=False),
    "vscode": ClientConfig("VS Code", "servers", typed=True),
}


def default_path(client: str) -> Path:
    if client == "claude-code":
        return Path.cwd() / ".mcp.json"
    if client == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    if client == "cursor":
        return Path.home() / ".cursor" / "mcp.json"
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "Claude" / "claude_desktop_config.json"


def add_install(install: argparse.ArgumentParser) -> None:
    install.add_argument("client", choices=list(CLIENTS), help="the client whose config gets the server")
    install.add_argument("target", help="file.py[:NAME] to serve; arguments after -- go to the file")
    install.add_argument("--name", help="the entry's name (default: the file's name without .py)")
    install.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="set in the server's environment"
    )
    install.add_argument("--config-path", type=Path, help="the config file to change (default: the client's)")


def entry_for(target: str, script_args: Sequence[str], env: dict[str, str], typed: bool) -> dict[str, Any]:
    spec, name = split_target(target)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise UsageError(f"no such file: {spec} (install serves a file.py[:NAME])")
    served = str(path.resolve()) + (f":{name}" if name else "")
    entry: dict[str, Any] = {"type": "stdio"} if typed else {}
    entry["command"] = sys.executable
    entry["args"] = ["-m", "mcpkit", "serve", served, *(["--", *script_args] if script_args else [])]
    if env:
        entry["env"] = env
    return entry


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {pair!r} is not KEY=VALUE")
        env[key] = value
    return env


def read_config(path: Path, key: str) -> dict[str, Any]:
    """The config as it stands ({} when there is none); anything but a JSON object with `key` an object
    is refused, so a file mcpkit cannot read is never overwritten."""
    if not path.exists():
        return {}
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; nothing was changed") from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); fix it or move it "
            "away, nothing was changed"
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
        raise UsageError(f"{path}: expected a JSON object with {key!r} an object; nothing was changed")
    return config


def write_config(path: Path, config: dict[str, Any]) -> Path | None:
    """Replace the file at once (a temporary file renamed over it), after copying the old one to .bak."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        shutil.copy2(path, backup)
    fresh = path.with_name(path.name + ".mcpkit-new")
    fresh.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(fresh, path)
    return backup


def run_install(args: argparse.Namespace, script_args: Sequence[str]) -> int:
    client = CLIENTS[args.client]
    entry = entry_for(args.target, script_args, parse_env(args.env), client.typed)
    name = args.name or Path(split_target(args.target)[0]).stem
    path = args.config_path or default_path(args.client)
    config = read_config(path, client.key)
    servers = config.setdefault(client.key, {})
    verb = "replaced" if name in servers else "added"
    servers[name] = entry
    backup = write_config(path, config)
    kept = f" (the old file is {backup})" if backup else ""
    print(f"mcpkit: {verb} {name!r} in {client.title}'s {path}{kept}; restart {client.title} to load it")
    return 0
