"""The commerce example served with --auth-issuer: a real process behind tokens from oidc-provider."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from auth_server import MCP_PORT, METADATA, RESOURCE, AuthServer, authorization_server

import peers
from mcpkit.client.client import connect_http
from mcpkit.client.oauth import ClientCredentials, OAuthClient

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


def commerce(issuer: str, db: Path, port: int = MCP_PORT) -> list[str]:
    script = str(ROOT / "examples" / "commerce" / "server.py")
    return [sys.executable, script, "--db", str(db), "--http", "--port", str(port), "--auth-issuer", issuer]


ENV = {"PYTHONPATH": str(ROOT / "src")}


async def post(url: str, token: str | None = None) -> httpx.Response:
    headers = {**HEADERS, **({"authorization": f"Bearer {token}"} if token else {})}
    async with httpx.AsyncClient() as http:
        return await http.post(url, json=INITIALIZE, headers=headers)


async def test_check_inventory_needs_a_commerce_write_token_from_the_issuer(
    provider: AuthServer, tmp_path: Path
) -> None:
    auth = OAuthClient(
        RESOURCE,
        grant="client_credentials",
        client=ClientCredentials("mcp-service", "mcp-service-secret"),
        scope="commerce:write",
    )
    with peers.server_process(commerce(provider.issuer, tmp_path / "shop.db"), MCP_PORT, ENV):
        anonymous = await post(RESOURCE)
        narrow = await post(RESOURCE, await provider.token(scope="mcp:tools"))
        async with httpx.AsyncClient() as http:
            metadata = (await http.get(METADATA)).json()
        async with connect_http(RESOURCE, auth=auth, timeout=10) as client:
            result = await client.call_tool("check_inventory", {"sku": "ACC-FLT-100"})
    assert anonymous.status_code == 401
    assert anonymous.headers.get_list("www-authenticate")[0] == (
        f'Bearer resource_metadata="{METADATA}", scope="commerce:write"'
    )
    assert metadata["authorization_servers"] == [provider.issuer]
    assert metadata["resource"] == RESOURCE and metadata["scopes_supported"] == ["commerce:write"]
    assert narrow.status_code == 403 and 'error="insufficient_scope"' in narrow.headers["www-authenticate"]
    assert result["structuredContent"]["total"] == 240


async def test_it_starts_while_the_issuer_is_unreachable_and_says_tokens_cannot_be_checked(
    tmp_path: Path,
) -> None:
    port, nowhere = peers.free_port(), f"http://127.0.0.1:{peers.free_port()}"
    url = f"http://127.0.0.1:{port}/mcp"
    with peers.server_process(commerce(nowhere, tmp_path / "shop.db", port), port, ENV):
        anonymous = await post(url)
        with_token = await post(url, "eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
    assert anonymous.status_code == 401
    assert with_token.status_code == 503 and with_token.headers["retry-after"] == "5"


def test_auth_issuer_needs_http(tmp_path: Path) -> None:
    import subprocess

    command = [sys.executable, str(ROOT / "examples" / "commerce" / "server.py"), "--auth-issuer", "http://x"]
    done = subprocess.run(command, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--auth-issuer needs --http" in done.stderr
