"""Limits keyed by tenant: principals whose tokens carry one `tenant` claim share a bucket, another
tenant has its own (a protected server on a real uvicorn, the principals API keys with claims)."""

from __future__ import annotations

import pytest

import peers
from mcpkit import Server
from mcpkit.auth import APIKey, APIKeyVerifier, protect
from mcpkit.client import connect_http
from mcpkit.protocol.errors import RemoteError
from mcpkit.server.middleware import RateLimit
from mcpkit.server.middleware.limit_store import tenant_key
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio

ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]
KEYS = {
    "alice": ("alice-key-0123456789abcdef", "acme"),
    "carol": ("carol-key-0123456789abcdef", "acme"),
    "bob": ("bob-key-0123456789abcdefgh", "globex"),
}


def limited_server() -> Server:
    server = Server("tenants")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    server.middleware.add(
        RateLimit(per_second=0.001, burst=2, key=tenant_key("tenant")), methods={"tools/call"}
    )
    return server


@pytest.mark.parametrize("era", ERAS, ids=["2025-11-25", "2026-07-28"])
async def test_the_principals_of_one_tenant_share_its_rate_and_another_tenant_has_its_own(
    era: dict[str, str],
) -> None:
    port = peers.free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    entries = [APIKey.of(key, who, claims={"tenant": tenant}) for who, (key, tenant) in KEYS.items()]
    app = protect(
        StreamableHTTPApp(limited_server()), verifier=APIKeyVerifier(entries, audience=url), resource=url
    )
    answers: dict[str, list[object]] = {}
    async with peers.serving(app, port=port):
        for who in ["alice", "carol", "alice", "bob", "bob"]:
            headers = {"Authorization": f"Bearer {KEYS[who][0]}"}
            async with connect_http(url, headers=headers, **era) as client:  # type: ignore[arg-type]
                try:
                    answer: object = (await client.call_tool("add", {"a": 1, "b": 1}))["structuredContent"]
                except RemoteError as exc:
                    answer = exc.code
            answers.setdefault(who, []).append(answer)
    assert answers == {"alice": [{"result": 2}, -32010], "carol": [{"result": 2}], "bob": [{"result": 2}] * 2}
