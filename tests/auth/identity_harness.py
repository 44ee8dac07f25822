"""The login proxy's test bench: the upstream identity provider (npm oidc-provider WITHOUT dynamic
registration, tests/auth/upstream_idp.mjs), mcpkit's AuthorizationServer in front of it beside a protected
MCP server on a real uvicorn, and a browser made of httpx that keeps its cookies and fills in the forms.

The fixtures `upstream` (one provider a module), `proxy` and `browser` (alice's) are shared by the test
modules that bind them: `upstream = identity_harness.upstream`, and so on."""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
import pytest
from auth_server import NPM_DIR, node

import peers
from mcpkit import Server
from mcpkit.auth.identity import AuthorizationServer, ProxyToken, Upstream
from mcpkit.protocol.oauth_server import pkce_challenge
from mcpkit.server.context import Context
from mcpkit.transports.http_server import StreamableHTTPApp

SCRIPT = Path(__file__).with_name("upstream_idp.mjs")
# The proxy's port comes first: its callback URL is in the provider's configuration of the proxy's client.
PROXY_PORT = peers.free_port()
ISSUER = f"http://127.0.0.1:{PROXY_PORT}"
RESOURCE = f"{ISSUER}/mcp"
CLIENT_REDIRECT = "http://127.0.0.1:8976/callback"  # where MCP clients' loopback listeners would be
SCOPES = ("mcp:tools", "mcp:admin")
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
_PROMPT = re.compile(r'name="prompt" value="([a-z]+)"')


@contextmanager
def upstream_provider() -> Iterator[str]:
    """The upstream provider on a free port (its issuer URL), which knows only the proxy's client."""
    runtime = node()
    if runtime is None or not (NPM_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.skip("oidc-provider is not installed (scripts/setup-peers installs it into .interop/npm)")
    port = peers.free_port()
    env = {"PORT": str(port), "NPM_DIR": str(NPM_DIR), "REDIRECT": f"{ISSUER}/callback"}
    with peers.server_process([runtime, str(SCRIPT)], port, env):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """The upstream provider's issuer URL, one provider for a test module."""
    with upstream_provider() as issuer:
        yield issuer


@pytest.fixture
async def proxy(upstream: str) -> AsyncIterator[AuthorizationServer]:
    """mcpkit's authorization server in front of `upstream`, served at ISSUER."""
    async with running_proxy(upstream) as server:
        yield server


@pytest.fixture
async def browser() -> AsyncIterator[BrowserSession]:
    """Alice's browser (she signs in at the provider as alice)."""
    session = BrowserSession("alice")
    yield session
    await session.aclose()


def identity_server() -> Server:
    """A server whose tools say who called and call the provider's userinfo on the user's behalf."""
    server = Server("identity")

    @server.tool()
    async def whoami(ctx: Context) -> dict[str, Any]:
        token = ctx.auth
        assert isinstance(token, ProxyToken) and token.upstream is not None
        return {
            "subject": token.subject,
            "client": token.client_id,
            "scopes": sorted(token.scopes),
            "name": token.upstream.identity.get("name"),
        }

    @server.tool()
    async def upstream_name(ctx: Context, userinfo: str) -> str:
        token = ctx.auth
        assert isinstance(token, ProxyToken) and token.upstream is not None
        headers = {"authorization": f"Bearer {token.upstream.access_token}"}
        async with httpx.AsyncClient() as http:
            return str((await http.get(userinfo, headers=headers)).json()["name"])

    return server


@asynccontextmanager
async def running_proxy(
    upstream_issuer: str, *, userinfo: bool = True, **options: Any
) -> AsyncIterator[AuthorizationServer]:
    """The AuthorizationServer for `upstream_issuer` beside the protected identity_server(), served at
    ISSUER (client ID metadata documents may be http:// URLs on loopback here: the tests serve them).
    Without `userinfo`, the user is identified by the provider's ID token."""
    upstream = await Upstream.discover(
        upstream_issuer, "mcpkit-proxy", "mcpkit-proxy-secret", scopes=("openid", "profile"), name="Test IdP"
    )
    if not userinfo:
        upstream = dataclasses.replace(upstream, userinfo_endpoint=None)
    auth = AuthorizationServer(
        issuer=ISSUER,
        resource=RESOURCE,
        upstream=upstream,
        scopes=SCOPES,
        **{"allow_http_client_ids": True, "allow_private_client_ids": True, **options},
    )
    app = auth.protect(StreamableHTTPApp(identity_server()), required_scopes=["mcp:tools"])
    try:
        async with peers.serving(app, port=PROXY_PORT):
            yield auth
    finally:
        await auth.aclose()


async def register(redirect_uris: list[str] | None = None, **metadata: Any) -> dict[str, Any]:
    """A public client registered at the proxy (RFC 7591)."""
    body = {"redirect_uris": redirect_uris or [CLIENT_REDIRECT], "client_name": "Test Client", **metadata}
    body.setdefault("token_endpoint_auth_method", "none")
    body.setdefault("grant_types", ["authorization_code", "refresh_token"])
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{ISSUER}/register", json=body)
    assert answer.status_code == 201, answer.text
    found: dict[str, Any] = answer.json()
    return found


@dataclass
class Request:
    """One authorization request of a client, with its PKCE verifier and state."""

    client_id: str
    redirect_uri: str = CLIENT_REDIRECT
    verifier: str = ""
    state: str = ""
    scope: str = "mcp:tools"

    def __post_init__(self) -> None:
        self.verifier = self.verifier or secrets.token_urlsafe(48)
        self.state = self.state or secrets.token_urlsafe(16)

    def url(self, **changes: str | None) -> str:
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": self.state,
            "code_challenge": pkce_challenge(self.verifier),
            "code_challenge_method": "S256",
            "scope": self.scope,
            "resource": RESOURCE,
            **changes,
        }
        return f"{ISSUER}/authorize?" + urlencode({k: v for k, v in params.items() if v is not None})


class BrowserSession:
    """A user's browser: one cookie jar, following no redirect by itself."""

    def __init__(self, login: str = "alice") -> None:
        self.login = login
        self.http = httpx.AsyncClient(follow_redirects=False, timeout=20)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def consent_page(self, request: Request, **changes: str | None) -> httpx.Response:
        return await self.http.get(request.url(**changes))

    async def post_consent(self, fields: dict[str, str], **headers: str) -> httpx.Response:
        return await self.http.post(f"{ISSUER}/consent", data=fields, headers=headers)

    async def to_provider(self, request: Request) -> str:
        """Through the consent page (allowed): the provider's authorization URL."""
        approved = await self.post_consent(
            {**form_fields(await self.consent_page(request)), "decision": "approve"}
        )
        assert approved.status_code == 303, approved.text
        return approved.headers["location"]

    async def at_provider(self, url: str) -> str:
        """Logs in at the provider and returns the proxy callback URL it redirects to (not followed)."""
        answer = await self.http.get(url)
        for _ in range(10):
            if answer.is_redirect:
                location = urljoin(str(answer.url), answer.headers["location"])
                if location.startswith(f"{ISSUER}/callback"):
                    return location
                answer = await self.http.get(location)
                continue
            action, prompt = _ACTION.search(answer.text), _PROMPT.search(answer.text)
            assert answer.status_code == 200 and action and prompt, answer.text[:500]
            fields = {"prompt": prompt.group(1)}
            if prompt.group(1) == "login":
                fields |= {"login": self.login, "password": "any"}
            answer = await self.http.post(urljoin(str(answer.url), action.group(1)), data=fields)
        raise AssertionError("the provider never redirected back to the proxy")

    async def sign_in(self, request: Request) -> str:
        """The whole login: the authorization code the client receives."""
        callback = await self.at_provider(await self.to_provider(request))
        back = await self.http.get(callback)
        assert back.status_code == 302, back.text
        answer = query_of(back.headers["location"])
        assert answer.get("state") == request.state and "code" in answer, answer
        return answer["code"]


def form_fields(page: httpx.Response) -> dict[str, str]:
    """The hidden fields of the consent page's form."""
    assert page.status_code == 200, page.text
    return {name: unescape(value) for name, value in _HIDDEN.findall(page.text)}


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def redeem(request: Request, code: str, **changes: str) -> httpx.Response:
    """The token endpoint's answer to the code (public client)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": request.redirect_uri,
        "client_id": request.client_id,
        "code_verifier": request.verifier,
        **changes,
    }
    async with httpx.AsyncClient() as http:
        return await http.post(f"{ISSUER}/token", data=form)
