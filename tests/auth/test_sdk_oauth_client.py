"""Interop: the official Python SDK's OAuth client (mcp.client.auth.OAuthClientProvider) runs the
authorization-code flow at the real oidc-provider and calls a tool on a protected mcpkit server.

The SDK reads the 401 challenge (Bearer beside DPoP, since protect() offers DPoP by default), finds the
Protected Resource Metadata and the provider's metadata, and asks for a Bearer token: it has no DPoP."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from auth_server import (
    MCP_PORT,
    MCP_SCOPES,
    REDIRECT,
    RESOURCE,
    AuthServer,
    Browser,
    authorization_server,
    mcp_app,
)
from mcp import ClientSession, types
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

import peers
from mcpkit.auth import SCOPE_KEY, AccessToken, JWTVerifier, protect

pytestmark = [pytest.mark.interop, pytest.mark.anyio]
warnings.filterwarnings("ignore", category=UserWarning)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


class Storage:
    """The SDK's TokenStorage in memory, with mcp-app pre-registered (the provider has no registration)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client = OAuthClientInformationFull(
            client_id="mcp-app",
            client_secret="mcp-app-secret",
            redirect_uris=[REDIRECT],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["authorization_code", "refresh_token"],
        )

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Redirects:
    """The SDK's redirect and callback handlers over the httpx "browser" that logs in as `login`."""

    def __init__(self, login: str) -> None:
        self.browser = Browser(login)
        self.landed = ""

    async def redirect(self, url: str) -> None:
        self.landed = await self.browser(url)

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.landed).query)
        assert "code" in query, self.landed
        first = {name: values[0] for name, values in query.items()}
        return AuthorizationCodeResult(code=first["code"], state=first.get("state"), iss=first.get("iss"))


@pytest.mark.parametrize("dpop", ["allowed", "disabled"])
async def test_the_sdk_oauth_client_gets_a_token_at_the_provider_and_calls_a_protected_tool(
    provider: AuthServer, dpop: str
) -> None:
    check = JWTVerifier(issuer=provider.issuer, audience=RESOURCE, token_type="at+jwt")
    inner, seen = mcp_app(), []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope.get(SCOPE_KEY))
        await inner(scope, receive, send)

    app = protect(
        recording,
        verifier=check,
        resource=RESOURCE,
        authorization_servers=[provider.issuer],
        scopes_supported=MCP_SCOPES,
        required_scopes=["mcp:tools"],
        dpop=dpop,  # type: ignore[arg-type]
    )
    storage, redirects = Storage(), Redirects("bob")
    auth = OAuthClientProvider(
        server_url=RESOURCE,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT]),  # type: ignore[list-item]
        storage=storage,
        redirect_handler=redirects.redirect,
        callback_handler=redirects.callback,
    )
    async with (
        peers.serving(app, port=MCP_PORT),
        httpx2.AsyncClient(auth=auth, timeout=20) as http,
        streamable_http_client(RESOURCE, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        result = await session.call_tool("echo", {"text": "from the sdk"})
    await check.aclose()
    assert [b.text for b in result.content if isinstance(b, types.TextContent)] == ["from the sdk"]
    assert redirects.browser.forms == ["login", "consent"]
    assert storage.tokens is not None and storage.tokens.token_type.lower() == "bearer"
    tokens: list[AccessToken] = [a for a in seen if a is not None]
    assert tokens and {(a.subject, a.client_id) for a in tokens} == {("bob", "mcp-app")}
    assert all("cnf" not in a.claims for a in tokens)
