"""End to end: mcpkit's OAuthClient runs the authorization-code flow (PKCE, RFC 8707 resource) at the real
provider, the user's login and consent typed into its devInteractions forms by an httpx "browser", and the
token opens the protected mcpkit server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from auth_server import (
    MCP_PORT,
    MCP_SCOPES,
    REDIRECT,
    RESOURCE,
    AuthServer,
    authorization_server,
    mcp_app,
    serving_on,
)

from mcpkit.auth import SCOPE_KEY, AccessToken, JWTVerifier, protect
from mcpkit.client.client import connect_http
from mcpkit.client.oauth import ClientCredentials, OAuthClient

pytestmark = pytest.mark.anyio

_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
_PROMPT = re.compile(r'name="prompt" value="([a-z]+)"')


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


class Browser:
    """Follows the provider's redirects and fills in its login and consent forms as user `login`."""

    def __init__(self, login: str) -> None:
        self.login = login
        self.forms: list[str] = []

    async def __call__(self, url: str) -> str:
        async with httpx.AsyncClient(follow_redirects=False) as http:  # keeps the provider's cookies
            answer = await http.get(url)
            for _ in range(10):
                if answer.is_redirect:
                    location = urljoin(str(answer.url), answer.headers["location"])
                    if location.startswith(REDIRECT):
                        return location
                    answer = await http.get(location)
                    continue
                answer = await self._submit(http, answer)
        raise AssertionError("the provider never redirected back")

    async def _submit(self, http: httpx.AsyncClient, page: httpx.Response) -> httpx.Response:
        action, prompt = _ACTION.search(page.text), _PROMPT.search(page.text)
        assert page.status_code == 200 and action and prompt, page.text[:500]
        self.forms.append(prompt.group(1))
        form = {"prompt": prompt.group(1)}
        if prompt.group(1) == "login":
            form |= {"login": self.login, "password": "any"}
        return await http.post(urljoin(str(page.url), action.group(1)), data=form)


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
    async with serving_on(app, MCP_PORT), connect_http(RESOURCE, auth=auth, timeout=20) as client:
        result = await client.call_tool("echo", {"text": "as alice"})
    await check.aclose()
    assert result["content"][0]["text"] == "as alice"
    assert browser.forms == ["login", "consent"]
    assert {(a.subject, a.client_id) for a in seen} == {("alice", "mcp-app")}
    assert all("mcp:tools" in a.scopes for a in seen)
    assert auth.dpop is not None
    assert {a.claims["cnf"]["jkt"] for a in seen} == {auth.dpop.thumbprint}
