"""API keys (static bearer tokens) on a protected server over a real uvicorn, in both protocol eras, alone
and beside OAuth tokens from the real authorization server (npm oidc-provider)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from auth_server import MCP_PORT, RESOURCE, AuthServer, authorization_server

import peers
from mcpkit import Context, Server
from mcpkit.auth import (
    AnyVerifier,
    APIKeyVerifier,
    InvalidToken,
    JWTVerifier,
    TokenVerifier,
    hash_api_key,
    protect,
)
from mcpkit.auth.api_keys import API_KEY_ISSUER, parse_api_keys
from mcpkit.client import connect_http
from mcpkit.protocol.errors import RemoteError
from mcpkit.transports.http_server import StreamableHTTPApp
from messages import HEADERS, INITIALIZE

pytestmark = pytest.mark.anyio

ALICE_KEY = "alice-0123456789-abcdefghij"
BOB_KEY = "bob-0123456789-abcdefghijklm"
ERAS = [{"protocol_version": "2025-11-25"}, {"era": "modern"}]
ERA_IDS = ["2025-11-25", "2026-07-28"]


def key_file(tmp_path: Path) -> Path:
    """Alice's key stored as its hash, Bob's as itself."""
    path = tmp_path / "keys.txt"
    lines = [
        "# key subject scopes...",
        f"{hash_api_key(ALICE_KEY)} alice mcp:tools admin",
        "",
        f"{BOB_KEY} bob mcp:tools   # a plain key works too",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def keyed_server() -> Server:
    server = Server("keyed")

    @server.tool()
    def whoami(ctx: Context) -> str:
        auth = ctx.auth
        assert auth is not None
        return f"{auth.subject} {' '.join(sorted(auth.scopes))} {auth.claims['iss']}"

    @server.tool(scopes=["admin"])
    def wipe() -> str:
        return "wiped"

    return server


@asynccontextmanager
async def serving(verifier: TokenVerifier, port: int, **options: Any) -> AsyncIterator[str]:
    url = f"http://127.0.0.1:{port}/mcp"
    app = protect(StreamableHTTPApp(keyed_server()), verifier=verifier, resource=url, **options)
    async with peers.serving(app, port=port):
        yield url


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def text_of(client: Any, tool: str) -> str:
    return str((await client.call_tool(tool, {}))["content"][0]["text"])


def test_a_key_file_holds_hashed_and_plain_keys_with_their_subjects_and_scopes(tmp_path: Path) -> None:
    keys = parse_api_keys(key_file(tmp_path).read_text())
    assert [(k.subject, sorted(k.scopes)) for k in keys] == [
        ("alice", ["admin", "mcp:tools"]),
        ("bob", ["mcp:tools"]),
    ]
    assert keys[0].key_id == hash_api_key(ALICE_KEY)[7:19]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("short-key alice", "at least 20 characters"),
        (f"{ALICE_KEY}", "expected 'key subject scope...'"),
        ("sha256:abc alice", "64 hexadecimal digits"),
        ("k\u00e9y-0123456789-0123456789 alice", "only letters, digits"),
        (f"{ALICE_KEY} alice\n{hash_api_key(ALICE_KEY)} again", "line 3: the same key as line 2"),
    ],
)
def test_a_malformed_key_file_is_refused_naming_the_line_and_never_the_key(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as refused:
        parse_api_keys(f"# header\n{line}\n", "keys.txt")
    assert "keys.txt, line" in str(refused.value)
    assert line.split()[0] not in str(refused.value)


async def test_a_changed_key_file_is_read_again_and_a_broken_one_keeps_the_keys_read_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    path = key_file(tmp_path)
    verifier = APIKeyVerifier.from_file(path, audience=RESOURCE, check_every=1.0, clock=lambda: now[0])
    assert (await verifier.verify(ALICE_KEY)).subject == "alice"
    path.write_text(f"{BOB_KEY} bob mcp:tools\n")  # alice's key revoked
    assert (await verifier.verify(ALICE_KEY)).subject == "alice"  # not looked at again within a second
    now[0] = 1.5
    with pytest.raises(InvalidToken, match="not known"):
        await verifier.verify(ALICE_KEY)
    assert (await verifier.verify(BOB_KEY)).subject == "bob"
    path.write_text("short alice\n")
    now[0] = 3.0
    assert (await verifier.verify(BOB_KEY)).subject == "bob"
    assert "was not read again" in caplog.text and "line 1" in caplog.text and "short" not in caplog.text
    path.write_text("# every key revoked\n")
    now[0] = 4.5
    with pytest.raises(InvalidToken, match="not known"):
        await verifier.verify(BOB_KEY)


@pytest.mark.parametrize("era", ERAS, ids=ERA_IDS)
async def test_an_api_key_makes_its_subject_the_caller_with_its_scopes_in_both_eras(
    tmp_path: Path, era: dict[str, str]
) -> None:
    port = peers.free_port()
    verifier = APIKeyVerifier.from_file(key_file(tmp_path), audience=f"http://127.0.0.1:{port}/mcp")
    async with serving(verifier, port, required_scopes=["mcp:tools"]) as url:
        async with connect_http(url, headers=bearer(ALICE_KEY), **era) as alice:  # type: ignore[arg-type]
            assert await text_of(alice, "whoami") == f"alice admin mcp:tools {API_KEY_ISSUER}"
            assert await text_of(alice, "wipe") == "wiped"
        async with connect_http(url, headers=bearer(BOB_KEY), **era) as bob:  # type: ignore[arg-type]
            assert await text_of(bob, "whoami") == f"bob mcp:tools {API_KEY_ISSUER}"
            assert [t["name"] for t in await bob.list_all_tools()] == ["whoami"]  # wipe needs admin
            with pytest.raises(RemoteError, match="403"):
                await bob.call_tool("wipe", {})


async def test_without_a_known_key_the_answer_is_401_with_a_realm_challenge_and_no_oauth_metadata(
    tmp_path: Path,
) -> None:
    port = peers.free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    verifier = APIKeyVerifier.from_file(key_file(tmp_path), audience=resource)
    async with serving(verifier, port, dpop="disabled") as url, httpx.AsyncClient() as http:
        missing = await http.post(url, json=INITIALIZE, headers=HEADERS)
        unknown = await http.post(url, json=INITIALIZE, headers={**HEADERS, **bearer(BOB_KEY + "x")})
        hashed = await http.post(url, json=INITIALIZE, headers={**HEADERS, **bearer(hash_api_key(ALICE_KEY))})
        metadata = await http.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == f'Bearer realm="{resource}"'
    assert unknown.status_code == 401
    assert unknown.headers["www-authenticate"] == (
        f'Bearer realm="{resource}", error="invalid_token", error_description="the API key is not known"'
    )
    assert hashed.status_code == 400  # "sha256:..." is no Bearer token at all; its hash is not the key
    assert metadata.status_code == 404


async def test_a_session_opened_with_one_key_is_not_found_for_another(tmp_path: Path) -> None:
    port = peers.free_port()
    verifier = APIKeyVerifier.from_file(key_file(tmp_path), audience=f"http://127.0.0.1:{port}/mcp")
    async with serving(verifier, port) as url, httpx.AsyncClient() as http:
        opened = await http.post(url, json=INITIALIZE, headers={**HEADERS, **bearer(ALICE_KEY)})
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        stolen = await http.post(url, json=listing, headers={**HEADERS, **session, **bearer(BOB_KEY)})
        owner = await http.post(url, json=listing, headers={**HEADERS, **session, **bearer(ALICE_KEY)})
    assert opened.status_code == 200
    assert stolen.status_code == 404
    assert owner.status_code == 200


# ---- beside OAuth --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


@asynccontextmanager
async def keys_and_oauth(provider: AuthServer, tmp_path: Path) -> AsyncIterator[str]:
    jwt = JWTVerifier(issuer=provider.issuer, audience=RESOURCE)
    keys = APIKeyVerifier.from_file(key_file(tmp_path), audience=RESOURCE)
    try:
        verifier = AnyVerifier(keys, jwt)
        async with serving(verifier, MCP_PORT, authorization_servers=[provider.issuer]) as url:
            yield url
    finally:
        await jwt.aclose()


@pytest.mark.parametrize("era", ERAS, ids=ERA_IDS)
async def test_an_api_key_and_an_oauth_token_are_both_accepted(
    provider: AuthServer, tmp_path: Path, era: dict[str, str]
) -> None:
    token = await provider.token(client="mcp-service", scope="mcp:tools")
    async with keys_and_oauth(provider, tmp_path) as url:
        async with connect_http(url, headers=bearer(token), **era) as oauth:  # type: ignore[arg-type]
            assert await text_of(oauth, "whoami") == f"mcp-service mcp:tools {provider.issuer}"
        async with connect_http(url, headers=bearer(ALICE_KEY), **era) as key:  # type: ignore[arg-type]
            assert await text_of(key, "whoami") == f"alice admin mcp:tools {API_KEY_ISSUER}"


async def test_a_token_neither_accepts_is_refused_with_both_reasons_and_the_oauth_metadata(
    provider: AuthServer, tmp_path: Path
) -> None:
    async with keys_and_oauth(provider, tmp_path) as url, httpx.AsyncClient() as http:
        refused = await http.post(url, json=INITIALIZE, headers={**HEADERS, **bearer(ALICE_KEY + "x")})
        metadata = await http.get(f"http://127.0.0.1:{MCP_PORT}/.well-known/oauth-protected-resource/mcp")
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer resource_metadata="http://127.0.0.1:')
    assert json.loads(refused.text)["error_description"] == (
        "the API key is not known; the token is not a well-formed JWT"
    )
    assert metadata.json()["authorization_servers"] == [provider.issuer]


def test_api_keys_need_no_oauth_extra_and_a_dpop_proof_without_it_is_refused_in_dpop_terms() -> None:
    """`mcpkit serve --api-keys` with only the http extra: PyJWT absent (blocked here) must not be needed to
    protect an app with keys; a DPoP proof sent anyway is a 401 invalid_dpop_proof, not a crash."""
    code = (
        "import sys; sys.modules['jwt'] = None\n"
        "from mcpkit.auth.api_keys import APIKeyVerifier\n"
        "from mcpkit.auth.asgi import protect\n"
        "from mcpkit.auth.dpop import DPoPChecker\n"
        "from mcpkit.protocol.resource_auth import AuthRefusal\n"
        "protect(lambda *a: None, verifier=APIKeyVerifier([], audience='http://x/mcp'), resource='http://x/mcp')\n"
        "try:\n"
        "    DPoPChecker()._verified('a.b.c')\n"
        "except AuthRefusal as refusal:\n"
        "    print(refusal.status, refusal.error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["401", "invalid_dpop_proof"]
