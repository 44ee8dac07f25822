"""End to end: mcpkit's OAuthClient runs the authorization-code flow (PKCE, RFC 8707 resource) at the real
provider, the user's login and consent typed into its devInteractions forms by an httpx "browser", and the
token opens the protected mcpkit server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from auth_server import (
    MCP_PORT,
    MCP_SCOPES,
    RESOURCE,
    AuthServer,
    Browser,
    authorization_server,
    mcp_app,
)

import peers
from mcpkit.auth import SCOPE_KEY, AccessToken, JWTVerifier, protect
from mcpkit.client.client import connect_http
from mcpkit.client.oauth import ClientCredentials, OAuthClient

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


async def test_the_authorization_code_flow_at_the_provider_opens_the_protected_server(
    provider: AuthServer,
) -> None:
    check = JWTVerifier(issuer=provider.issuer, audience=RESOURCE, token_type="at+jwt")
    inner = mcp_app()
    seen: list[AccessToken] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if SCOPE_KEY in scope:
            seen.append(scope[SCOPE_KEY])
        await inner(scope, receive, send)

    app = protect(
        recording,
        verifier=check,
        resource=RESOURCE,
        authorization_servers=[provider.issuer],
        scopes_supported=MCP_SCOPES,
        required_scopes=["mcp:tools"],
    )
    browser = Browser("alice")
    # protect() offers DPoP beside Bearer and oidc-provider lists ES256: the client gets a DPoP-bound token
    client_id = ClientCredentials("mcp-app", "mcp-app-secret")
    auth = OAuthClient(RESOURCE, user_agent=browser, client=client_id)
    async with peers.serving(app, port=MCP_PORT), connect_http(RESOURCE, auth=auth, timeout=20) as client:
        result = await client.call_tool("echo", {"text": "as alice"})
    await check.aclose()
    assert result["content"][0]["text"] == "as alice"
    assert browser.forms == ["login", "consent"]
    assert {(a.subject, a.client_id) for a in seen} == {("alice", "mcp-app")}
    assert all("mcp:tools" in a.scopes for a in seen)
    assert auth.dpop is not None
    assert {a.claims["cnf"]["jkt"] for a in seen} == {auth.dpop.thumbprint}
