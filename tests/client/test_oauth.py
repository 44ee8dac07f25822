"""OAuthClient against a real authorization server and protected MCP endpoint (tests/client/oauth_peer.py)."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import httpx
import pytest
from oauth_peer import AuthorizedMCP, Settings, tool_server

import peers
from mcpkit.client import connect_http
from mcpkit.client.oauth import ClientCredentials, OAuthClient, OAuthError
from mcpkit.protocol.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS
from mcpkit.transports.http_server import StreamableHTTPApp

requirement = pytest.mark.requirement

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


async def follow_once(url: str) -> str:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        return (await http.get(url)).headers["location"]


def serving(app: AuthorizedMCP) -> Any:
    return peers.serving(app, "/mcp", lifespan="off")


async def use(url: str, auth: OAuthClient, *, call: bool = True) -> None:
    async with connect_http(url, auth=auth, timeout=10) as client:
        await client.list_tools()
        if call:
            result = await client.call_tool("echo", {"text": "hi"})
            assert result["content"][0]["text"] == "hi"


@requirement("auth-prm-discovery")
@requirement("auth-resource-parameter")
async def test_a_401_leads_through_discovery_registration_and_a_pkce_code_flow_to_a_working_session() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    [registration] = app.seen["register"]
    assert registration["redirect_uris"] and registration["application_type"] == "native"
    [request] = app.seen["authorize"]
    assert request["code_challenge_method"] == "S256" and request["resource"] == f"{app.base}/mcp"
    assert request["client_id"] == "dcr-1" and request["scope"] == "read write"
    [token] = app.seen["token"]
    assert token["grant_type"] == "authorization_code" and token["resource"] == f"{app.base}/mcp"
    assert token["code_verifier"]


async def test_a_pre_registered_client_does_not_register_and_authenticates_with_basic() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    client = ClientCredentials("pre-registered", "s3cret")
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once, client=client))
    assert app.seen["register"] == []
    expected = "Basic " + base64.b64encode(b"pre-registered:s3cret").decode()
    assert [t["authorization"] for t in app.seen["token"]] == [expected]


@requirement("auth-scope-selection")
async def test_without_a_scope_in_the_challenge_the_resources_scopes_supported_are_requested() -> None:
    app = AuthorizedMCP(Settings(challenge_scope=None))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    assert app.seen["authorize"][0]["scope"] == "read write"


async def test_offline_access_is_requested_only_where_the_server_lists_it() -> None:
    listed = AuthorizedMCP(
        Settings(challenge_scope="read write", scopes_supported=["read", "write", "offline_access"])
    )
    async with serving(listed) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    assert listed.seen["authorize"][0]["scope"] == "read write offline_access"
    unlisted = AuthorizedMCP(Settings(challenge_scope="read write"))
    async with serving(unlisted) as url:
        await use(url, OAuthClient(url, user_agent=follow_once, scope="read write offline_access"))
    assert unlisted.seen["authorize"][0]["scope"] == "read write"


async def test_an_expired_access_token_is_refreshed_instead_of_authorizing_again() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write", expires_in=1))  # inside the 30 s leeway
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    grants = [t["grant_type"] for t in app.seen["token"]]
    assert grants[0] == "authorization_code" and "refresh_token" in grants[1:]
    assert len(app.seen["authorize"]) == 1


@requirement("auth-step-up")
async def test_insufficient_scope_steps_up_to_the_scopes_the_403_names() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read"))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    assert [a.get("scope") for a in app.seen["authorize"]] == ["read", "read write"]
    assert [d["status"] for d in app.seen["denied"]][-1] == 403


@requirement("auth-step-up")
async def test_a_step_up_that_cannot_succeed_stops_after_a_bounded_number_of_authorizations() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read", never_enough_scope=True))
    async with serving(app) as url:
        with pytest.raises(Exception):  # noqa: B017 (the transport's error for the final 403)
            await use(url, OAuthClient(url, user_agent=follow_once), call=False)
    assert 1 <= len(app.seen["authorize"]) <= 3


async def test_an_authorization_response_from_another_issuer_is_refused_before_the_token_request() -> None:
    app = AuthorizedMCP(Settings(iss_in_redirect="https://evil.example"))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=follow_once), call=False)
    assert "invalid_issuer" in str(caught.value) or isinstance(caught.value, OAuthError)
    assert app.seen["token"] == []


@requirement("auth-pkce-s256")
async def test_a_server_whose_metadata_does_not_list_s256_pkce_is_refused_before_authorization() -> None:
    app = AuthorizedMCP(Settings(pkce=False))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=follow_once), call=False)
    assert "pkce_unsupported" in str(caught.value)
    assert app.seen["authorize"] == [] and app.seen["token"] == []


async def test_resource_metadata_naming_another_resource_is_refused_before_authorization() -> None:
    app = AuthorizedMCP(Settings(prm_resource="https://evil.example/mcp"))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=follow_once), call=False)
    assert "invalid_resource" in str(caught.value) and app.seen["authorize"] == []


async def test_metadata_whose_issuer_is_not_the_one_asked_for_is_refused() -> None:
    app = AuthorizedMCP(Settings(metadata_issuer="https://evil.example"))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=follow_once), call=False)
    assert "invalid_metadata" in str(caught.value) and app.seen["register"] == []


async def test_the_client_credentials_grant_authenticates_the_client_and_needs_no_user() -> None:
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    client = ClientCredentials("pre-registered", "s3cret")
    async with serving(app) as url:
        await use(url, OAuthClient(url, grant="client_credentials", client=client))
    assert app.seen["authorize"] == []
    [token] = app.seen["token"]
    assert token["grant_type"] == "client_credentials" and token["scope"] == "read write"
    assert token["authorization"].startswith("Basic ")


@pytest.mark.parametrize("versions", [MODERN_VERSIONS, SUPPORTED_VERSIONS], ids=["modern-only", "both"])
async def test_a_login_slower_than_the_era_probe_is_waited_for_and_asked_once(versions: Any) -> None:
    """Issue 31 item 19: the probe's timeout is the server's silence, not the user's time at the login."""
    app = AuthorizedMCP(Settings(challenge_scope="read write"))
    server = tool_server()
    server.versions = versions
    app.mcp = StreamableHTTPApp(server)

    async def slow_user(url: str) -> str:
        await anyio.sleep(4.0)  # far past the probe's 1.5 s, which a loaded machine's answers stay within
        return await follow_once(url)

    async with serving(app) as url:
        auth = OAuthClient(url, user_agent=slow_user)
        async with connect_http(url, auth=auth, timeout=20, probe_timeout=1.5, era_key=None) as client:
            assert client.stateless
            assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
    assert len(app.seen["authorize"]) == 1
