"""What a handler knows of the request it answers: the verified access token (`ctx.auth`), the HTTP
request's headers and the session id, carried from a protected Streamable HTTP server to the Context in
both eras, with tokens from the real authorization server (npm oidc-provider)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from auth_server import MCP_PORT, MCP_SCOPES, RESOURCE, AuthServer, authorization_server

import peers
from mcpkit import Server
from mcpkit.auth import JWTVerifier, protect
from mcpkit.client.client import connect_http
from mcpkit.server.context import Context
from mcpkit.testing import connect
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


def whoami_server() -> Server:
    server = Server("whoami")

    @server.tool()
    async def whoami(ctx: Context) -> dict[str, Any]:
        token, headers = ctx.auth, ctx.request_headers
        return {
            "subject": token.subject if token else None,
            "client": token.client_id if token else None,
            "scopes": sorted(token.scopes) if token else None,
            "marker": headers.get("x-test-marker") if headers is not None else None,
            "session": ctx.session_id,
            "clientName": ctx.client_info.get("name"),
        }

    return server


async def whoami_over_http(provider: AuthServer, era: str, scope: str) -> dict[str, Any]:
    check = JWTVerifier(issuer=provider.issuer, audience=RESOURCE)
    app = protect(
        StreamableHTTPApp(whoami_server()),
        verifier=check,
        resource=RESOURCE,
        authorization_servers=[provider.issuer],
        scopes_supported=MCP_SCOPES,
        required_scopes=("mcp:tools",),
    )
    token = await provider.token(scope=scope)
    headers = {"authorization": f"Bearer {token}", "x-test-marker": f"sent-{era}"}
    try:
        async with (
            peers.serving(app, port=MCP_PORT),
            connect_http(RESOURCE, headers=headers, era=era, timeout=10) as client,
        ):
            result = await client.call_tool("whoami", {})
            session = client.stream.session_id  # type: ignore[attr-defined]  # the HTTP client stream's
    finally:
        await check.aclose()
    return {"result": result["structuredContent"], "session": session}


async def test_a_handshake_era_handler_sees_the_token_the_headers_and_its_session(
    provider: AuthServer,
) -> None:
    answer = await whoami_over_http(provider, "handshake", "mcp:tools commerce:write")
    seen = answer["result"]
    assert seen["subject"] == seen["client"] == "mcp-service"
    assert seen["scopes"] == ["commerce:write", "mcp:tools"]
    assert seen["marker"] == "sent-handshake"
    assert seen["session"] is not None and seen["session"] == answer["session"]
    assert seen["clientName"] == "mcpkit"


async def test_a_stateless_handler_sees_the_token_and_headers_and_no_session(provider: AuthServer) -> None:
    seen = (await whoami_over_http(provider, "modern", "mcp:tools"))["result"]
    assert seen["subject"] == "mcp-service" and seen["scopes"] == ["mcp:tools"]
    assert seen["marker"] == "sent-modern"
    assert seen["session"] is None


async def test_without_http_a_handler_has_no_token_headers_or_session() -> None:
    async with connect(whoami_server()) as client:
        seen = (await client.call_tool("whoami", {}))["structuredContent"]
    assert seen["subject"] is seen["marker"] is seen["session"] is None
    assert seen["clientName"] == "mcpkit"
