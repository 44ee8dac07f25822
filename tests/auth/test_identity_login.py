"""mcpkit's authorization server in front of an upstream identity provider (npm oidc-provider, which has
no dynamic registration): a client registers with mcpkit, the user allows it on mcpkit's consent page and
signs in at the provider, and the token mcpkit issues opens the protected MCP server, where a handler
sees who the user is and calls the provider's API with the provider's token (`ctx.auth`)."""

from __future__ import annotations

from typing import Any

import httpx
import identity_harness
import orjson
import pytest
from identity_harness import (
    CLIENT_REDIRECT,
    ISSUER,
    RESOURCE,
    BrowserSession,
    Request,
    redeem,
    register,
    running_proxy,
)

import peers
from mcpkit.auth.identity import AuthorizationServer, MemoryIdentityStore, ProxyToken
from mcpkit.client import connect_http
from mcpkit.transports.http_server.asgi import respond

upstream = identity_harness.upstream
proxy = identity_harness.proxy
browser = identity_harness.browser
pytestmark = pytest.mark.anyio


async def tokens_for(browser: BrowserSession, scope: str = "mcp:tools") -> tuple[Request, dict[str, Any]]:
    client = await register()
    request = Request(client["client_id"], scope=scope)
    answer = await redeem(request, await browser.sign_in(request))
    assert answer.status_code == 200, answer.text
    return request, answer.json()


async def call(token: str, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    headers = {"authorization": f"Bearer {token}"}
    async with connect_http(RESOURCE, headers=headers, timeout=10) as client:
        return await client.call_tool(tool, arguments or {})


async def test_the_metadata_names_the_endpoints_s256_and_client_id_metadata_documents(
    proxy: AuthorizationServer,
) -> None:
    async with httpx.AsyncClient() as http:
        found = (await http.get(f"{ISSUER}/.well-known/oauth-authorization-server")).json()
        resource = (await http.get(f"{ISSUER}/.well-known/oauth-protected-resource/mcp")).json()
    assert found["issuer"] == ISSUER and found["authorization_endpoint"] == f"{ISSUER}/authorize"
    assert found["registration_endpoint"] == f"{ISSUER}/register"
    assert found["code_challenge_methods_supported"] == ["S256"]
    assert found["client_id_metadata_document_supported"] is True
    assert resource["authorization_servers"] == [ISSUER] and resource["resource"] == RESOURCE


async def test_a_registered_client_gets_a_token_for_the_user_the_provider_signed_in(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    _, tokens = await tokens_for(browser)
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp:tools" and tokens["refresh_token"]
    seen = (await call(tokens["access_token"], "whoami"))["structuredContent"]
    assert seen["subject"] == "alice" and seen["scopes"] == ["mcp:tools"]
    assert seen["name"] == "User alice" and seen["client"].startswith("mcp-")


async def test_a_handler_calls_the_providers_api_with_the_users_upstream_token(
    proxy: AuthorizationServer, upstream: str, browser: BrowserSession
) -> None:
    _, tokens = await tokens_for(browser)
    userinfo = proxy.login.upstream.userinfo_endpoint
    assert userinfo is not None and userinfo.startswith(upstream)
    result = await call(tokens["access_token"], "upstream_name", {"userinfo": userinfo})
    assert result["content"][0]["text"] == "User alice"


async def test_the_providers_tokens_are_stored_sealed(upstream: str, browser: BrowserSession) -> None:
    store = MemoryIdentityStore()
    async with running_proxy(upstream, store=store) as proxy:
        _, tokens = await tokens_for(browser)
        access = await proxy.verifier.verify(tokens["access_token"])
    upstream_token = access.upstream.access_token  # type: ignore[attr-defined]
    assert upstream_token and access.subject == "alice"
    kept = b"".join([await store.get(key) or b"" for key in list(store.keys())])
    assert upstream_token.encode() not in kept and tokens["access_token"].encode() not in kept


async def test_a_refresh_token_rotates_and_a_spent_one_ends_the_grant(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    request, tokens = await tokens_for(browser)
    form = {"grant_type": "refresh_token", "client_id": request.client_id}
    async with httpx.AsyncClient() as http:
        fresh = await http.post(f"{ISSUER}/token", data={**form, "refresh_token": tokens["refresh_token"]})
        assert fresh.status_code == 200 and fresh.json()["refresh_token"] != tokens["refresh_token"]
        assert (await call(fresh.json()["access_token"], "whoami"))["structuredContent"]["subject"] == "alice"
        replayed = await http.post(f"{ISSUER}/token", data={**form, "refresh_token": tokens["refresh_token"]})
        assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
        newest = await http.post(
            f"{ISSUER}/token", data={**form, "refresh_token": fresh.json()["refresh_token"]}
        )
        unauthorized = await http.post(
            RESOURCE, headers={"authorization": f"Bearer {fresh.json()['access_token']}"}
        )
    assert newest.status_code == 400 and newest.json()["error"] == "invalid_grant"
    assert unauthorized.status_code == 401


async def test_revoking_the_refresh_token_ends_the_access_token_too(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    request, tokens = await tokens_for(browser)
    async with httpx.AsyncClient() as http:
        revoked = await http.post(
            f"{ISSUER}/revoke", data={"token": tokens["refresh_token"], "client_id": request.client_id}
        )
        after = await http.post(RESOURCE, headers={"authorization": f"Bearer {tokens['access_token']}"})
    assert revoked.status_code == 200
    assert after.status_code == 401 and "invalid_token" in after.headers["www-authenticate"]


async def test_a_client_named_by_its_metadata_document_signs_in_without_registering(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    port = peers.free_port()
    client_id = f"http://127.0.0.1:{port}/client.json"
    document = {
        "client_id": client_id,
        "client_name": "Document Client",
        "redirect_uris": [CLIENT_REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code"],
    }

    async def serve_document(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await respond(send, 200, orjson.dumps(document), [(b"content-type", b"application/json")])

    async with peers.serving(serve_document, port=port):
        request = Request(client_id)
        page = await browser.consent_page(request)
        assert "Document Client" in page.text and client_id in page.text
        answer = await redeem(request, await browser.sign_in(request))
    assert answer.status_code == 200 and "refresh_token" not in answer.json()
    assert (await call(answer.json()["access_token"], "whoami"))["structuredContent"]["client"] == client_id


async def test_the_providers_token_is_renewed_for_handlers_and_kept_sealed_for_the_grant(
    proxy: AuthorizationServer, browser: BrowserSession
) -> None:
    _, tokens = await tokens_for(browser)
    before = await proxy.verifier.verify(tokens["access_token"])
    assert isinstance(before, ProxyToken) and before.upstream is not None and before.upstream.refresh_token
    fresh = await proxy.upstream_tokens(before, min_validity=10**9)  # "expiring": renewed now
    after = await proxy.verifier.verify(tokens["access_token"])
    assert fresh.access_token != before.upstream.access_token
    assert isinstance(after, ProxyToken) and after.upstream == fresh
    assert fresh.identity == before.upstream.identity
    userinfo = proxy.login.upstream.userinfo_endpoint
    assert userinfo is not None
    result = await call(tokens["access_token"], "upstream_name", {"userinfo": userinfo})
    assert result["content"][0]["text"] == "User alice"  # the handler's token is the renewed one
    assert await proxy.upstream_tokens(after) == fresh  # not expiring: kept as it is


async def test_without_a_userinfo_endpoint_the_user_is_the_subject_of_the_providers_id_token(
    upstream: str, browser: BrowserSession
) -> None:
    async with running_proxy(upstream, userinfo=False) as proxy:
        assert proxy.login.upstream.userinfo_endpoint is None
        _, tokens = await tokens_for(browser)
        access = await proxy.verifier.verify(tokens["access_token"])
    assert access.subject == "alice"
    identity = access.upstream.identity  # type: ignore[attr-defined]
    assert identity["iss"] == upstream and identity["aud"] == "mcpkit-proxy" and identity["nonce"]
