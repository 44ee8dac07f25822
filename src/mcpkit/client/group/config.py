"""The `mcpServers` JSON that Claude Desktop, Cursor, Claude Code (and, as `servers`, VS Code) keep, read into
server specs: a stdio command with args/env/cwd, or an HTTP URL with headers.

mcpkit's own keys sit beside the usual ones and other clients ignore them: per server `tools`, `prompts`
and `resources` filters (`{"allow": [globs], "deny": [globs]}`) and, for an HTTP one, `oauth` (true, or a
pre-registered `clientId`/`clientSecret`; the CLI then logs in); at the top level an `mcpkit` object
with `separator`, `prefix`, `collisions` and the group's filters. `"disabled": true` skips a server.
`${VAR}` and `${VAR:-default}` in strings are taken from the environment, as Claude Code does (and VS
Code's `${env:VAR}`; its `${workspaceFolder}` is the current directory).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .filters import Filters

__all__ = [
    "ConfigError",
    "GroupConfig",
    "HttpServer",
    "ServerSpec",
    "StdioServer",
    "load_config",
    "parse_config",
]

# ${VAR}, ${VAR:-default} (Claude Code), ${env:VAR} and ${workspaceFolder} (VS Code); VS Code's
# ${input:...} asks the user, which a config reader cannot, so it is left as written.
_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamableHttp", "sse"})


class ConfigError(ValueError):
    """The config file cannot be used as it is; the message names the server and the key."""


@dataclass(frozen=True)
class StdioServer:
    """A server started as a process and spoken to over its stdin/stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    filters: Filters = field(default_factory=Filters)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


@dataclass(frozen=True)
class HttpServer:
    """A server reached over Streamable HTTP (or, found by fallback, the 2024-11-05 HTTP+SSE transport)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    filters: Filters = field(default_factory=Filters)
    oauth: Mapping[str, str] | None = None  # "oauth": true, or {"clientId": ..., "clientSecret": ...}


ServerSpec = StdioServer | HttpServer


@dataclass(frozen=True)
class GroupConfig:
    """Everything a config file says: the servers in file order, and the group's own settings."""

    servers: dict[str, ServerSpec]
    separator: str = "."
    prefix: bool = True
    collisions: str = "prefix"
    filters: Filters = field(default_factory=Filters)
    source: str | None = None


def _expand(value: Any, where: str) -> Any:
    if isinstance(value, str):

        def var(m: re.Match[str]) -> str:
            default = os.getcwd() if m.group(1) == "workspaceFolder" else m.group(2)
            found = os.environ.get(m.group(1), default)
            if found is None:
                raise ConfigError(f"{where}: ${{{m.group(1)}}} is not set in the environment")
            return found

        return _VAR.sub(var, value)
    if isinstance(value, list):
        return [_expand(v, where) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, where) for k, v in value.items()}
    return value


def _filters(entry: dict[str, Any], where: str) -> Filters:
    try:
        return Filters.from_config(entry, where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where} must be an object of strings")
    return dict(value)


def _oauth(value: Any, name: str) -> Mapping[str, str] | None:
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, dict) and set(value) <= {"clientId", "clientSecret"}:
        return _strings(value, f"server {name!r}: oauth")
    raise ConfigError(f"server {name!r}: oauth is true or {{'clientId': ..., 'clientSecret': ...}}")


def server_spec(name: str, entry: Any) -> ServerSpec:
    """One `mcpServers` entry as a spec; ConfigError saying what is wrong with it."""
    if not isinstance(entry, dict):
        raise ConfigError(f"server {name!r}: an entry is an object")
    entry = _expand(entry, f"server {name!r}")
    filters = _filters(entry, f"server {name!r}")
    url, command = entry.get("url"), entry.get("command")
    if isinstance(url, str) and (command is None or entry.get("type") in _HTTP_TYPES):
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"server {name!r}: url must be http:// or https://, not {url!r}")
        headers = _strings(entry.get("headers"), f"server {name!r}: headers")
        return HttpServer(url, headers, filters, _oauth(entry.get("oauth"), name))
    if not isinstance(command, str) or not command:
        raise ConfigError(f"server {name!r}: give a command (stdio) or a url (HTTP)")
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"server {name!r}: args must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"server {name!r}: cwd must be a string")
    env = _strings(entry.get("env"), f"server {name!r}: env")
    return StdioServer(command, tuple(args), env, cwd, filters)


def parse_config(data: Any, source: str | None = None) -> GroupConfig:
    """A parsed config file (`mcpServers`, or VS Code's `servers`) as a GroupConfig."""
    if not isinstance(data, dict):
        raise ConfigError("a config is a JSON object with an mcpServers object")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict):
        raise ConfigError("the config has no mcpServers object")
    specs = {
        name: server_spec(name, entry)
        for name, entry in servers.items()
        if not (isinstance(entry, dict) and entry.get("disabled") is True)
    }
    own = data.get("mcpkit") or {}
    if not isinstance(own, dict):
        raise ConfigError("mcpkit: settings are an object")
    return GroupConfig(
        specs,
        separator=str(own.get("separator", ".")),
        prefix=bool(own.get("prefix", True)),
        collisions=str(own.get("collisions", "prefix")),
        filters=_filters(own, "mcpkit"),
        source=source,
    )


def load_config(path: str | os.PathLike[str]) -> GroupConfig:
    """Read and parse a config file."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from None
    return parse_config(data, str(path))
