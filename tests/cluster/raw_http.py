"""Raw HTTP to a cluster's workers, for tests that need to see statuses, headers and ids as sent."""

from __future__ import annotations

from typing import Any

import httpx

from messages import HEADERS, INITIALIZED, initialize


async def open_session(
    http: httpx.AsyncClient, url: str, version: str, capabilities: dict[str, Any] | None = None
) -> dict[str, str]:
    """An initialized handshake-era session at `url`: the headers its requests carry."""
    opened = await http.post(url, json=initialize(version, capabilities=capabilities), headers=HEADERS)
    assert opened.status_code == 200, opened.text
    headers = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}
    assert (await http.post(url, json=INITIALIZED, headers=headers)).status_code == 202
    return headers
