"""Raw HTTP to a cluster's workers, for tests that need to see statuses, headers and ids as sent."""

from __future__ import annotations

from typing import Any

import httpx

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def open_session(
    http: httpx.AsyncClient, url: str, version: str, capabilities: dict[str, Any] | None = None
) -> dict[str, str]:
    """An initialized handshake-era session at `url`: the headers its requests carry."""
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    opened = await http.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, headers=HEADERS
    )
    assert opened.status_code == 200, opened.text
    headers = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=headers)).status_code == 202
    return headers
