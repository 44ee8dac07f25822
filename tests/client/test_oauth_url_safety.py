"""Which URLs the OAuth client opens, sends credentials to and fetches (client/oauth/url_safety.py), and the
same rules end to end against tests/client/oauth_peer.py serving hostile metadata."""

from __future__ import annotations

import ipaddress

import pytest
from oauth_peer import AuthorizedMCP, Settings
from test_oauth import follow_once, serving, use

from mcpkit.client.oauth import ClientCredentials, OAuthClient
from mcpkit.client.oauth.url_safety import address_problem, fetch_url_problem, secure_url_problem


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.com/authorize",
        "http://localhost:8080/authorize",
        "http://app.localhost/authorize",
        "http://127.0.0.1/authorize",
        "http://127.8.9.10:9/authorize",
        "http://[::1]:8080/authorize",
    ],
)
def test_https_and_loopback_http_urls_may_be_opened_and_receive_credentials(url: str) -> None:
    assert secure_url_problem(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(document.domain)//https://auth.example.com/",
        "JavaScript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "http://auth.example.com/token",
        "http://10.0.0.5/token",
        "http://localhost.evil.example/token",
        "https:///no-host",
        "ftp://auth.example.com/",
        "",
    ],
)
def test_other_schemes_and_plain_http_off_loopback_are_refused(url: str) -> None:
    assert secure_url_problem(url) is not None


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1%25eth0]/",
        "http://10.1.2.3/",
        "http://172.16.0.1/",
        "http://172.31.255.255/",
        "http://192.168.1.1/",
        "http://[fd00::1]/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://[::ffff:169.254.169.254]/",
        "file:///etc/passwd",
        "gopher://example.com/",
    ],
)
def test_a_server_named_fetch_to_an_internal_address_is_refused(url: str) -> None:
    assert fetch_url_problem(url, trusted_origin="https://mcp.example.com") is not None


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/x", "http://[::1]/x", "https://example.com/x", "http://172.32.0.1/x"]
)
def test_loopback_and_public_addresses_may_be_fetched(url: str) -> None:
    assert fetch_url_problem(url, trusted_origin="https://mcp.example.com") is None


def test_allow_private_networks_lifts_the_address_rule_but_not_the_scheme_rule() -> None:
    assert fetch_url_problem("http://169.254.169.254/", allow_private_networks=True) is None
    assert fetch_url_problem("file:///etc/passwd", allow_private_networks=True) is not None
    assert address_problem(ipaddress.ip_address("10.0.0.1"), allow_private_networks=True) is None


def test_the_origin_of_the_server_the_user_chose_is_trusted_even_on_a_private_address() -> None:
    trusted = "http://10.0.0.5:8000/mcp"
    assert fetch_url_problem("http://10.0.0.5:8000/.well-known/x", trusted_origin=trusted) is None
    assert fetch_url_problem("http://10.0.0.6:8000/.well-known/x", trusted_origin=trusted) is not None


# ---- end to end -------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("endpoint", ["javascript:alert(document.domain)//", "file:///etc/passwd"])
async def test_an_authorization_endpoint_that_is_not_https_never_reaches_the_user_agent(
    endpoint: str,
) -> None:
    opened: list[str] = []

    async def browser(url: str) -> str:
        opened.append(url)
        return await follow_once(url)

    app = AuthorizedMCP(Settings(authorization_endpoint=endpoint))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=browser), call=False)
    assert "unsafe_url" in str(caught.value)
    assert opened == [] and app.seen["token"] == []


@pytest.mark.anyio
async def test_a_client_secret_is_never_sent_to_a_plain_http_token_endpoint_off_loopback() -> None:
    app = AuthorizedMCP(Settings(token_endpoint="http://auth.invalid/token"))
    client = ClientCredentials("pre-registered", "s3cret")
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, grant="client_credentials", client=client), call=False)
    # refused before any connection is tried (a tried one would fail as token_request_failed)
    assert "unsafe_url" in str(caught.value) and "token endpoint" in str(caught.value)


@pytest.mark.anyio
async def test_a_challenge_naming_a_link_local_metadata_url_is_refused_instead_of_fetched() -> None:
    app = AuthorizedMCP(Settings(resource_metadata_url="http://169.254.169.254/latest/meta-data/"))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=follow_once, timeout=2), call=False)
    assert "unsafe_url" in str(caught.value) and "169.254.169.254" in str(caught.value)
    assert app.seen["register"] == [] and app.seen["authorize"] == []
