"""A server named as a client's config names it (`mcpkit inspect notes`): looked up in the configs that
`mcpkit install` writes (Claude Desktop, Claude Code, Cursor, VS Code), in that order."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..cli.install import CLIENTS, default_path

__all__ = ["ConfigEntry", "from_client_configs"]


@dataclass(frozen=True)
class ConfigEntry:
    """A server as a client's config gives it: a URL or a command line, with its env and headers."""

    target: str
    where: Path
    env: dict[str, str] = field(default_factory=dict)
    headers: list[str] = field(default_factory=list)


def _entry(path: Path, key: str, name: str) -> object:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # no such file, or one that is not JSON: not where the name is
        return None
    servers = config.get(key) if isinstance(config, dict) else None
    return servers.get(name) if isinstance(servers, dict) else None


def _mapping(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def from_client_configs(name: str) -> ConfigEntry | None:
    """The first client config's server called `name`, or None when none has one."""
    for client, config in CLIENTS.items():
        path = default_path(client)
        entry = _entry(path, config.key, name)
        if not isinstance(entry, dict):
            continue
        headers = _mapping(entry.get("headers"))
        if isinstance(entry.get("url"), str):
            return ConfigEntry(entry["url"], path, headers=[f"{k}: {v}" for k, v in headers.items()])
        if isinstance(entry.get("command"), str):
            args = [str(a) for a in entry.get("args") or []]
            env = _mapping(entry.get("env"))
            words = shlex.join([entry["command"], *args])
            return ConfigEntry(words, path, env=env)
    return None
