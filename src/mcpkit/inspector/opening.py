"""Connect the inspector's client to the server named by a target (as the client commands take it),
every message shown to the hub, the server's stderr too."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from ..cli.connect import parse_headers, server_target
from ..cli.errors import UsageError
from ..client.client import Client
from ..client.era import Era
from ..protocol.jsonrpc import JSON
from .configs import from_client_configs
from .hub import Hub
from .tap import TappedStream

__all__ = ["Target", "open_client", "resolved"]


@dataclass(frozen=True)
class Target:
    """What to connect to, and how: an http(s) URL, a server.py file or a command line; `era` is auto,
    stateless or handshake (with `protocol_version`, a handshake-era version to ask for)."""

    server: str
    era: str = "auto"
    protocol_version: str | None = None
    headers: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # added to a stdio server's environment
    auth: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    timeout: float = 60.0


def _era_options(target: Target) -> JSON:
    try:
        era = Era(target.era)  # "modern" too, its name before 0.1
    except ValueError:
        raise ValueError(f"era is auto, stateless or handshake, not {target.era!r}") from None
    options: JSON = {"era": era, "era_key": None}  # an inspector sees what the server does now
    if era is Era.HANDSHAKE and target.protocol_version:
        options["protocol_version"] = target.protocol_version
    return options


async def _pump_stderr(process: Any, hub: Hub) -> None:
    """The server's stderr to the page's log, and on to the terminal, where a developer looks first."""
    async for chunk in process.stderr:
        sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
        for line in chunk.decode("utf-8", "replace").splitlines():
            hub.publish("stderr", line=line)


def resolved(target: Target) -> Target:
    """`target` itself, or, when its server is neither a URL nor a command but a name in a client's
    config (`mcpkit inspect notes`), the server that config gives, its env and headers added."""
    try:
        server_target(target.server)
    except UsageError:
        found = from_client_configs(target.server) if target.server.strip() else None
        if found is None:
            raise
        env = {**found.env, **target.env}
        return replace(target, server=found.target, env=env, headers=[*found.headers, *target.headers])
    return target


@asynccontextmanager
async def open_client(target: Target, hub: Hub, **client_options: Any) -> AsyncIterator[Client]:
    """A connected Client to `target`, built on a TappedStream; `client_options` go to Client."""
    target = resolved(target)
    kind, where = server_target(target.server)
    options = {**client_options, **_era_options(target), "timeout": target.timeout}

    def seen(direction: str, message: Any) -> None:
        hub.publish("message", direction=direction, message=message)

    if kind == "stdio":
        from ..transports.stdio import spawn

        env = {**os.environ, **target.env} if target.env else None

        async with (
            spawn(list(where), env=env, stderr=subprocess.PIPE, shutdown_timeout=2.0) as lines,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(_pump_stderr, lines.process, hub)  # type: ignore[attr-defined]
            async with Client(TappedStream(lines, seen), **options) as client:
                yield client
            tg.cancel_scope.cancel()
        return
    from ..transports.http_client import open_http_stream

    auth = _auth(target, str(where), hub)
    headers = parse_headers(target.headers)
    async with (
        open_http_stream(str(where), headers=headers, timeout=target.timeout, auth=auth) as stream,
        Client(TappedStream(stream, seen), **options) as client,
    ):
        yield client


def _auth(target: Target, url: str, hub: Hub) -> Any:
    """The CLI's OAuth client (loopback redirect, tokens kept in the config dir), whose authorization URL
    is also shown in the page, so a login works where the inspector cannot open a browser itself."""
    if target.auth != "oauth":
        return None
    from ..cli.oauth import loopback_login, oauth_client

    async def login(authorize_url: str) -> str:
        hub.publish("oauth", url=authorize_url)
        return await loopback_login(authorize_url)

    auth = oauth_client(url, target.client_id, target.client_secret)
    auth.user_agent = login
    return auth
