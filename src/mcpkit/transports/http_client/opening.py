"""`open_http_stream`: a Streamable HTTP MessageStream for as long as a block runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from ...runtime.groups import CallerCancellation, single_error
from .stream import HTTPClientStream

__all__ = ["open_http_stream"]


@asynccontextmanager
async def open_http_stream(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
    auth: httpx.Auth | None = None,
    **options: Any,
) -> AsyncIterator[HTTPClientStream]:
    """A Streamable HTTP MessageStream to `url` (falling back to HTTP+SSE); the session is DELETEd on exit.

    `auth` authorizes every request (e.g. mcpkit.client.oauth.OAuthClient).
    Options: max_message, reconnect_attempts, reconnect_on_404, retry_ms, legacy_fallback,
    backoff (a Backoff: the floor, growth and cap of the delay before an SSE stream is reopened).
    """
    cancelled = CallerCancellation()
    with single_error():
        async with (
            httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth) as http,
            anyio.create_task_group() as tg,
        ):
            stream = HTTPClientStream(url, http, tg, **options)
            # An Auth that may keep the user at a login says so (OAuthClient.authorizing): that time
            # is not the server's silence (client/era.py).
            stream.authorizing = getattr(auth, "authorizing", None)
            try:
                with cancelled.noting():
                    yield stream
            finally:
                await stream.aclose()
                tg.cancel_scope.cancel()
        cancelled.reraise()
