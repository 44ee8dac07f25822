"""How OAuthClient gets a client identity and finds a 2025-03-26 server (against oauth_peer.py)."""

from __future__ import annotations

from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from oauth_peer import AuthorizedMCP, Settings

import peers
from mcpkit.client import connect_http
from mcpkit.client.oauth import ClientCredentials, InMemoryTokenStore, OAuthClient, ServerMetadata
from mcpkit.client.oauth.token import authenticate

requirement = pytest.mark.requirement

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]
DOCUMENT = "https://client.example/metadata.json"


async def follow_once(url: str) -> str:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        return (await http.get(url)).headers["location"]


async def use(app: AuthorizedMCP, **options: Any) -> OAuthClient:
    async with peers.serving(app, "/mcp", lifespan="off") as url:
        auth = OAuthClient(url, user_agent=follow_once, **options)
        async with connect_http(url, auth=auth, timeout=10) as client:
            await client.call_tool("echo", {"text": "hi"})
    return auth


async def test_a_client_metadata_document_url_is_the_client_id_where_the_server_supports_it() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write", cimd=True))
    await use(app, client_metadata_url=DOCUMENT)
    assert app.seen["register"] == []
    assert {a["client_id"] for a in app.seen["authorize"]} == {DOCUMENT}


async def test_where_the_server_does_not_support_metadata_documents_the_client_registers() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write", cimd=False))
    await use(app, client_metadata_url=DOCUMENT)
    assert len(app.seen["register"]) == 1
    assert app.seen["authorize"][0]["client_id"] == "dcr-1"


@requirement("auth-token-per-issuer")
async def test_pre_registered_credentials_for_another_issuer_are_refused_and_never_sent() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    client = ClientCredentials("pre-registered", "s3cret")
    async with peers.serving(app, "/mcp", lifespan="off") as url:
        auth = OAuthClient(url, user_agent=follow_once, client=client, client_issuer="https://as.example")
        with pytest.raises(Exception, match="issuer_mismatch"):
            async with connect_http(url, auth=auth, timeout=10) as session:
                await session.list_tools()
    assert app.seen["register"] == [] and app.seen["authorize"] == [] and app.seen["token"] == []


@requirement("auth-token-per-issuer")
async def test_tokens_and_clients_are_stored_under_the_issuer_that_gave_them() -> None:
    store = InMemoryTokenStore()
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    await use(app, store=store)
    issuer = f"{app.base}/as"
    assert (await store.get_client(issuer)) is not None and (await store.get_tokens(issuer)) is not None
    assert (await store.get_tokens(app.base)) is None


async def test_a_2025_03_26_server_without_metadata_is_reached_at_its_default_endpoints() -> None:
    app = AuthorizedMCP(Settings(legacy=True, challenge_scope="read write"))
    await use(app)
    assert len(app.seen["register"]) == 1 and len(app.seen["authorize"]) == 1
    assert app.seen["token"][0]["grant_type"] == "authorization_code"


def test_private_key_jwt_sends_an_assertion_signed_for_the_authorization_server() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    client = ClientCredentials("svc", private_key_pem=pem.decode(), signing_algorithm="ES256")
    metadata = ServerMetadata(
        "https://as.example",
        "",
        "https://as.example/token",
        raw={"token_endpoint_auth_methods_supported": ["private_key_jwt"]},
    )
    form: dict[str, str] = {}
    assert authenticate(client, metadata, form) == {}
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(
        form["client_assertion"], key.public_key(), algorithms=["ES256"], audience="https://as.example"
    )
    assert claims["iss"] == claims["sub"] == "svc" and claims["exp"] > claims["iat"]


@requirement("auth-token-per-issuer")
async def test_when_the_resource_moves_to_another_authorization_server_the_client_registers_there_anew() -> (
    None
):
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    async with peers.serving(app, "/mcp", lifespan="off") as url:
        auth = OAuthClient(url, user_agent=follow_once)
        async with connect_http(url, auth=auth, timeout=10) as client:
            await client.call_tool("echo", {"text": "hi"})
            app.settings.issuer_path = "/as2"
            app.tokens.clear()  # the old server's tokens are no longer accepted
            await client.call_tool("echo", {"text": "again"})
    assert [r["at"] for r in app.seen["register"]] == ["/as", "/as2"]
    assert [(a["at"], a["client_id"]) for a in app.seen["authorize"]] == [("/as", "dcr-1"), ("/as2", "dcr-2")]
