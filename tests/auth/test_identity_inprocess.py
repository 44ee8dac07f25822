"""The login proxy's HTTP surface at an https issuer, driven in-process (no provider is reached before the
consent page is answered): the session cookie's __Host- prefix, CORS for browser-based clients,
registration's refusals, a full store, and credentials kept out of reprs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from mcpkit import Server
from mcpkit.auth.identity import (
    AuthorizationServer,
    MemoryIdentityStore,
    ProxyToken,
    Upstream,
    UpstreamTokens,
)
from mcpkit.protocol.oauth_server import pkce_challenge
from mcpkit.transports.http_server import StreamableHTTPApp

pytestmark = pytest.mark.anyio

ISSUER = "https://mcp.example.com"
REDIRECT = "http://127.0.0.1:8976/callback"
UPSTREAM = Upstream(
    client_id="proxy",
    client_secret="proxy-secret",
    authorization_endpoint="https://idp.example.com/authorize",
    token_endpoint="https://idp.example.com/token",
    userinfo_endpoint="https://idp.example.com/userinfo",
    name="Example IdP",
)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    login = AuthorizationServer(issuer=ISSUER, resource=f"{ISSUER}/mcp", upstream=UPSTREAM)
    app = login.protect(StreamableHTTPApp(Server("s")))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ISSUER) as client:
        yield client
    await login.aclose()


async def authorize(http: httpx.AsyncClient) -> httpx.Response:
    client = (
        await http.post("/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    ).json()
    params = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT,
        "code_challenge": pkce_challenge("v" * 43),
        "code_challenge_method": "S256",
    }
    return await http.get("/authorize", params=params)


async def test_over_https_the_session_cookie_is_host_prefixed_and_secure(http: httpx.AsyncClient) -> None:
    page = await authorize(http)
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("__Host-mcpkit_login=") and "; Path=/;" in cookie and cookie.endswith("; Secure")


async def test_a_consent_posted_with_the_cookie_of_the_plain_http_name_is_refused(
    http: httpx.AsyncClient,
) -> None:
    page = await authorize(http)
    value = page.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    http.cookies.clear()
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page.text))
    refused = await http.post(
        "/consent", data={**fields, "decision": "approve"}, headers={"cookie": f"mcpkit_login={value}"}
    )
    assert refused.status_code == 403


async def test_browser_based_clients_may_call_the_token_and_registration_endpoints(
    http: httpx.AsyncClient,
) -> None:
    preflight = await http.options(
        "/token", headers={"origin": "https://app.example", "access-control-request-method": "POST"}
    )
    token = await http.post(
        "/token", data={"grant_type": "authorization_code"}, headers={"origin": "https://app.example"}
    )
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
    assert "content-type" in preflight.headers["access-control-allow-headers"]
    assert token.status_code == 401 and token.headers["access-control-allow-origin"] == "*"
    consent = await http.options("/consent")
    assert "access-control-allow-origin" not in consent.headers


async def test_registration_refuses_bad_bodies_and_redirect_uris_with_control_characters(
    http: httpx.AsyncClient,
) -> None:
    not_json = await http.post("/register", content=b"x", headers={"content-type": "application/json"})
    header_split = await http.post(
        "/register", json={"redirect_uris": ["https://a.example/cb\r\nSet-Cookie: x=1"]}
    )
    assert not_json.status_code == 400 and not_json.json()["error"] == "invalid_client_metadata"
    assert header_split.status_code == 400 and header_split.json()["error"] == "invalid_redirect_uri"


async def test_a_full_store_answers_503_instead_of_growing() -> None:
    store = MemoryIdentityStore(max_entries=2)
    login = AuthorizationServer(issuer=ISSUER, resource=f"{ISSUER}/mcp", upstream=UPSTREAM, store=store)
    metadata = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=login), base_url=ISSUER) as http:
        answers = [(await http.post("/register", json=metadata)).status_code for _ in range(3)]
        full = await http.post("/register", json=metadata)
    await login.aclose()
    assert answers == [201, 201, 503] and full.headers["retry-after"] == "60" and len(store) == 2


def test_the_providers_tokens_stay_out_of_reprs() -> None:
    tokens = UpstreamTokens("access-secret", refresh_token="refresh-secret", id_token="id-secret")
    shown = repr(ProxyToken(None, None, frozenset(), None, (), upstream=tokens)) + repr(tokens)
    assert "secret" not in shown and "UpstreamTokens(token_type='Bearer'" in shown


def test_extra_authorization_params_reach_the_provider_but_never_replace_the_proxys_own() -> None:
    google_like = dataclasses.replace(
        UPSTREAM, scopes=("openid",), authorization_params={"access_type": "offline", "state": "forged"}
    )
    url = google_like.authorization_url("https://mcp.example.com/callback", "ours", "v" * 43, "n")
    sent = parse_qs(urlsplit(url).query)
    assert sent["access_type"] == ["offline"] and sent["state"] == ["ours"] and sent["nonce"] == ["n"]
    assert sent["code_challenge_method"] == ["S256"] and sent["client_id"] == ["proxy"]


async def test_the_token_endpoint_names_unsupported_and_unauthorized_grant_types(
    http: httpx.AsyncClient,
) -> None:
    metadata = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}  # authorization_code only
    client = (await http.post("/register", json=metadata)).json()["client_id"]
    password = await http.post("/token", data={"grant_type": "password", "client_id": client})
    refresh = await http.post(
        "/token", data={"grant_type": "refresh_token", "client_id": client, "refresh_token": "x"}
    )
    assert (
        password.json()["error"] == "unsupported_grant_type"
        and refresh.json()["error"] == "unauthorized_client"
    )
