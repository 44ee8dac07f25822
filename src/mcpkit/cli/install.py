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

Before anything is written the entry's own command loads the server (`serve --check`): a server that cannot
start is not installed. An existing file is kept whole but for the one entry, and copied to FILE.bak first; a
file that is not a JSON object is refused, unchanged (config_file.py: links, modes, exclusive temp files).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config_file import read_config, target_file, write_config
from .errors import LOAD, UsageError
from .load import split_target

__all__ = ["CLIENTS", "add_install", "run_install"]

LOAD_TIMEOUT = 60.0


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


def add_install(sub: Any) -> None:
    """The `install` subcommand on the `mcpkit` parser's subparsers."""
    install: argparse.ArgumentParser = sub.add_parser(
        "install", help="add a server to Claude Desktop, Claude Code, Cursor or VS Code"
    )
    install.add_argument("client", choices=list(CLIENTS), help="the client whose config gets the server")
    install.add_argument("target", help="file.py[:NAME] to serve; arguments after -- go to the file")
    install.add_argument("--name", help="the entry's name (default: the file's name without .py)")
    install.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="set in the server's environment"
    )
    install.add_argument("--config-path", type=Path, help="the config file to change (default: the client's)")
    install.set_defaults(run=run_install)


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


def check_loads(entry: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str] | None:
    """The failed `mcpkit serve FILE --check` of the entry (its stderr says why), or None when it loads."""
    served = entry["args"][:4]  # -m mcpkit serve FILE[:NAME]
    command = [entry["command"], *served, "--check", *entry["args"][4:]]
    try:
        done = subprocess.run(
            command,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=LOAD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(
            command, LOAD, "", f"mcpkit: it took over {LOAD_TIMEOUT:g}s to load\n"
        )
    return done if done.returncode else None


def run_install(args: argparse.Namespace) -> int:
    """`mcpkit install`; args.script_args: the words after `--`, the file's own arguments."""
    client = CLIENTS[args.client]
    entry = entry_for(args.target, args.script_args, parse_env(args.env), client.typed)
    name = args.name or Path(split_target(args.target)[0]).stem
    path = target_file(args.config_path or default_path(args.client), explicit=args.config_path is not None)
    config = read_config(path, client.key)
    failed = check_loads(entry, parse_env(args.env))
    if failed is not None:
        sys.stderr.write(failed.stderr)
        print(
            f"mcpkit: {args.target} does not load, so it was not installed; {path} is unchanged",
            file=sys.stderr,
        )
        return failed.returncode
    servers = config.setdefault(client.key, {})
    verb = "replaced" if name in servers else "added"
    servers[name] = entry
    backup = write_config(path, config)
    kept = f" (the old file is {backup})" if backup else ""
    print(f"mcpkit: {verb} {name!r} in {client.title}'s {path}{kept}; restart {client.title} to load it")
    return 0
