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
from messages import HEADERS, INITIALIZE

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


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


async def update_stock_post(token: str) -> httpx.Response:
    """A session-less 2026-07-28 update_stock call, raw, with `token`."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    arguments = {"sku": "ACC-FLT-100", "warehouse": "LON", "delta": 1}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "update_stock", "arguments": arguments, "_meta": meta},
    }
    headers = {
        **HEADERS,
        "authorization": f"Bearer {token}",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "update_stock",
    }
    async with httpx.AsyncClient() as http:
        return await http.post(RESOURCE, json=message, headers=headers)


async def test_tokens_need_mcp_tools_and_update_stock_needs_commerce_write(
    provider: AuthServer, tmp_path: Path
) -> None:
    auth = OAuthClient(
        RESOURCE,
        grant="client_credentials",
        client=ClientCredentials("mcp-service", "mcp-service-secret"),
        scope="mcp:tools",
    )
    with peers.server_process(commerce(provider.issuer, tmp_path / "shop.db"), MCP_PORT, ENV):
        anonymous = await post(RESOURCE)
        other_resource = await post(RESOURCE, await provider.token(scope="other:read", resource="urn:other"))
        narrow_update = await update_stock_post(await provider.token(scope="mcp:tools"))
        async with httpx.AsyncClient() as http:
            metadata = (await http.get(METADATA)).json()
        async with connect_http(RESOURCE, auth=auth, timeout=10) as client:
            listed = [tool["name"] for tool in (await client.list_tools())["tools"]]
            checked = await client.call_tool("check_inventory", {"sku": "ACC-FLT-100"})
            # 403 insufficient_scope: the client steps up to commerce:write and retries
            updated = await client.call_tool(
                "update_stock", {"sku": "ACC-FLT-100", "warehouse": "LON", "delta": 5}
            )
    assert anonymous.status_code == 401
    assert anonymous.headers.get_list("www-authenticate")[0] == (
        f'Bearer resource_metadata="{METADATA}", scope="mcp:tools"'
    )
    assert other_resource.status_code == 401
    assert metadata["authorization_servers"] == [provider.issuer]
    assert metadata["resource"] == RESOURCE
    assert metadata["scopes_supported"] == ["mcp:tools", "commerce:write"]
    assert narrow_update.status_code == 403
    challenge = narrow_update.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="commerce:write mcp:tools"' in challenge
    assert "update_stock" not in listed and "check_inventory" in listed
    assert checked["structuredContent"]["total"] == 240
    assert "structuredContent" in updated, updated
    assert updated["structuredContent"]["total"] == 245


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
