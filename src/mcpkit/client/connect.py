"""Connecting a Client over a transport: one `connect_*` per transport (a new transport's goes here).

Each takes the transport's own options and hands the rest to `Client`; each remembers the protocol
era it found per server (versioning "Backward Compatibility"), keyed by what names the server.
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Unpack

from .._extras import require
from ..protocol.jsonrpc import JSON
from ..runtime.groups import single_error
from .client import Client
from .options import ClientOptions, HTTPOptions, StdioOptions

__all__ = ["connect_http", "connect_stdio"]

# each transport's own options; the rest go to Client
_HTTP_STREAM_OPTIONS = HTTPOptions.__optional_keys__ - ClientOptions.__optional_keys__
_SPAWN_OPTIONS = StdioOptions.__optional_keys__ - ClientOptions.__optional_keys__


@asynccontextmanager
async def connect_stdio(command: list[str], **given: Unpack[StdioOptions]) -> AsyncIterator[Client]:
    """Spawn `command` as a stdio server and connect a Client to it."""
    from ..transports.stdio import spawn

    options: JSON = dict(given)
    spawn_options = {k: options.pop(k) for k in list(options) if k in _SPAWN_OPTIONS}
    options.setdefault("era_key", "stdio:" + shlex.join(command))  # remembered per server configuration
    with single_error():
        async with spawn(command, **spawn_options) as stream, Client(stream, **options) as client:
            yield client


@asynccontextmanager
async def connect_http(
    url: str, *, headers: dict[str, str] | None = None, **given: Unpack[HTTPOptions]
) -> AsyncIterator[Client]:
    """Connect a Client to a Streamable HTTP server at `url` (or a 2024-11-05 HTTP+SSE one).

    Transport options (see `open_http_stream`): auth (an httpx.Auth such as
    mcpkit.client.oauth.OAuthClient), max_message, reconnect_attempts, reconnect_on_404, retry_ms,
    legacy_fallback, backoff (mcpkit.transports.http_client.backoff.Backoff); the rest go to `Client`.
    """
    require("httpx", "http", "connect_http")
    from ..transports.http_client import open_http_stream

    options: JSON = dict(given)
    timeout = options.get("timeout") or 30.0
    stream_options = {k: options.pop(k) for k in list(options) if k in _HTTP_STREAM_OPTIONS}
    options.setdefault("era_key", "http:" + url)  # the era found is remembered per endpoint
    with single_error():
        async with (
            open_http_stream(url, headers=headers, timeout=timeout, **stream_options) as stream,
            Client(stream, **options) as c,
        ):
            yield c
