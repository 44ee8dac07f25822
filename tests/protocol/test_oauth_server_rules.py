"""The authorization server's pure rules (protocol/oauth_server.py and oauth_clients.py): PKCE S256 only
(RFC 7636), redirect URIs compared exactly (OAuth 2.1 §2.3.1), what registration and client ID metadata
documents may say (RFC 7591, MCP basic/authorization), scopes and the resource a token may name."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.oauth_clients import (
    client_from_document,
    client_from_registration,
    fetch_address_problem,
    is_document_client_id,
    redirect_uri_problem,
)
from mcpkit.protocol.oauth_server import (
    OAuthError,
    authorization_request,
    checked_redirect_uri,
    granted_scopes,
    narrowed_scopes,
    pkce_challenge,
    pkce_matches,
    with_query,
)

VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
# RFC 7636 Appendix B's example
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_the_s256_challenge_of_the_rfc_example_verifier() -> None:
    assert pkce_challenge(VERIFIER) == CHALLENGE
    assert pkce_matches(VERIFIER, CHALLENGE)


@pytest.mark.parametrize("verifier", [None, "", "short", VERIFIER[:-1] + "A", VERIFIER + "!" * 3])
def test_a_missing_malformed_or_different_verifier_does_not_match(verifier: str | None) -> None:
    assert not pkce_matches(verifier, CHALLENGE)


def test_a_redirect_uri_must_equal_a_registered_one_character_for_character() -> None:
    registered = ["http://127.0.0.1:8976/callback", "com.example.app:/cb"]
    assert checked_redirect_uri("com.example.app:/cb", registered) == "com.example.app:/cb"
    for near in (
        "http://127.0.0.1:8976/callback/",
        "http://127.0.0.1:8976/Callback",
        "http://localhost:8976/callback",
    ):
        with pytest.raises(OAuthError):
            checked_redirect_uri(near, registered)
    with pytest.raises(OAuthError, match="several"):
        checked_redirect_uri(None, registered)
    assert checked_redirect_uri(None, registered[:1]) == registered[0]


def request(**changes: str) -> dict[str, str]:
    params = {
        "response_type": "code",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "state": "s",
    }
    return {**params, **changes}


def test_an_authorization_request_needs_code_and_an_s256_challenge() -> None:
    ok = authorization_request(request(), "c", "https://app.test/cb", ["a", "b"], "https://mcp.test/mcp")
    assert ok.scopes == ("a", "b") and ok.resource == "https://mcp.test/mcp" and ok.state == "s"
    for changes, error in [
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": "too-short"}, "invalid_request"),
        ({"scope": "a admin"}, "invalid_scope"),
        ({"resource": "https://other.test/mcp"}, "invalid_target"),
    ]:
        with pytest.raises(OAuthError) as caught:
            authorization_request(
                request(**changes), "c", "https://app.test/cb", ["a", "b"], "https://mcp.test/mcp"
            )
        assert caught.value.error == error


def test_scopes_default_to_all_and_a_refresh_may_only_narrow_them() -> None:
    assert granted_scopes(None, ["a", "b"]) == ("a", "b")
    assert granted_scopes("b b", ["a", "b"]) == ("b",)
    assert narrowed_scopes("a", ["a", "b"]) == ("a",)
    with pytest.raises(OAuthError):
        narrowed_scopes("a c", ["a", "b"])


def test_an_answer_keeps_the_redirect_uris_own_query() -> None:
    assert (
        with_query("https://app.test/cb?x=1", {"code": "c", "state": None})
        == "https://app.test/cb?x=1&code=c"
    )


@pytest.mark.parametrize(
    ("uri", "accepted"),
    [
        ("https://app.test/cb", True),
        ("http://127.0.0.1:9/cb", True),
        ("http://[::1]:9/cb", True),
        ("http://localhost/cb", True),
        ("com.example.app:/cb", True),
        ("http://app.test/cb", False),
        ("https://app.test/cb#x", False),
        ("javascript:alert(1)", False),
        ("data:text/html,x", False),
        ("/relative", False),
        ("https://app.test/cb\r\nSet-Cookie: x=1", False),
        ("https://app.test/a b", False),
    ],
)
def test_which_redirect_uris_a_client_may_register(uri: str, accepted: bool) -> None:
    assert (redirect_uri_problem(uri) is None) is accepted


def test_registration_reads_the_metadata_and_defaults_to_a_confidential_client() -> None:
    info = client_from_registration(
        {"redirect_uris": ["https://app.test/cb"], "client_name": " App "}, "id-1"
    )
    assert (info.client_id, info.auth_method, info.client_name) == ("id-1", "client_secret_basic", "App")
    assert info.grant_types == ("authorization_code",)
    bad: dict[str, Any]
    for bad in ({"redirect_uris": []}, {"redirect_uris": ["https://a.test/cb"], "grant_types": ["password"]}):
        with pytest.raises(OAuthError):
            client_from_registration(bad, "id-2")


def test_a_metadata_document_client_id_is_an_https_url_with_a_path() -> None:
    assert is_document_client_id("https://app.test/oauth/client.json")
    for other in (
        "https://app.test/",
        "https://app.test",
        "http://app.test/c.json",
        "https://u:p@app.test/c",
        "https://app.test/a/../c.json",
        "mcp-123",
        "https://localhost/c.json",  # the server fetches the document: nothing of its own network
        "https://127.0.0.1/c.json",
        "https://10.1.2.3/c.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/c.json",
    ):
        assert not is_document_client_id(other), other
    assert is_document_client_id("http://127.0.0.1:9/c.json", allow_http=True)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.7", "private"),
        ("fd00::7", "private"),
        ("169.254.169.254", "link-local"),  # cloud instance metadata
        ("fe80::1%eth0", "link-local"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "not global"),  # carrier-grade NAT
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped IPv6: judged by its IPv4 address
        ("::ffff:10.0.0.1", "private"),
        ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
    ],
)
def test_the_server_fetches_nothing_from_its_own_network(address: str, kind: str) -> None:
    assert fetch_address_problem(address) == f"{address} is not a public address ({kind})"


def test_the_server_fetches_from_public_addresses() -> None:
    for address in ("93.184.215.14", "2606:4700:4700::1111", "::ffff:93.184.215.14"):
        assert fetch_address_problem(address) is None, address
    assert fetch_address_problem("not-an-address") == "'not-an-address' is not an IP address"


def test_a_metadata_document_must_name_its_own_url_and_claim_no_secret() -> None:
    url = "https://app.test/client.json"
    doc = {"client_id": url, "client_name": "App", "redirect_uris": ["http://127.0.0.1:3/cb"]}
    assert client_from_document(url, doc).from_document
    for changes in (
        {"client_id": "https://evil.test/client.json"},
        {"token_endpoint_auth_method": "client_secret_basic"},
    ):
        with pytest.raises(OAuthError):
            client_from_document(url, {**doc, **changes})
