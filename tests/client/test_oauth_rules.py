"""The pure rules under OAuthClient: the Bearer challenge, the well-known URL orders, the resource
match, the authorization response's checks, the token endpoint authentication chosen."""

from __future__ import annotations

import base64

import pytest

from mcpkit.client.oauth import ClientCredentials, OAuthError, ServerMetadata
from mcpkit.client.oauth.authorize import code_from_redirect
from mcpkit.client.oauth.challenge import parse_challenge
from mcpkit.client.oauth.token import auth_method, authenticate, pkce_pair
from mcpkit.client.oauth.urls import (
    authorization_server_metadata_urls,
    resource_covers,
    resource_metadata_urls,
)

requirement = pytest.mark.requirement
AS = ServerMetadata("https://as.example/tenant", "https://as.example/authorize", "https://as.example/token")


def test_the_bearer_challenge_gives_resource_metadata_scope_and_error() -> None:
    header = 'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/m?q=1,2"'
    challenge = parse_challenge(header)
    assert challenge.resource_metadata == "https://x.example/m?q=1,2"
    assert challenge.scope == "a b" and challenge.insufficient_scope


def test_a_challenge_of_another_scheme_or_none_has_no_parameters() -> None:
    assert parse_challenge('Basic realm="x"') == parse_challenge(None) == parse_challenge("")
    assert parse_challenge("bearer scope=read").scope == "read"


@requirement("auth-prm-discovery")
def test_resource_metadata_is_looked_for_with_the_path_then_at_the_root() -> None:
    assert resource_metadata_urls("https://mcp.example/a/mcp") == [
        "https://mcp.example/.well-known/oauth-protected-resource/a/mcp",
        "https://mcp.example/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://mcp.example") == [
        "https://mcp.example/.well-known/oauth-protected-resource"
    ]


@requirement("auth-as-metadata-order")
def test_authorization_server_metadata_urls_follow_the_specs_order() -> None:
    assert authorization_server_metadata_urls("https://as.example/tenant1") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant1",
        "https://as.example/.well-known/openid-configuration/tenant1",
        "https://as.example/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]


def test_a_resource_identifier_covers_its_own_url_and_the_paths_under_it_only() -> None:
    assert resource_covers("https://MCP.example/mcp", "https://mcp.example/mcp")
    assert resource_covers("https://mcp.example", "https://mcp.example/mcp")
    assert not resource_covers("https://mcp.example/mc", "https://mcp.example/mcp")
    assert not resource_covers("https://evil.example/mcp", "https://mcp.example/mcp")


def test_the_authorization_response_must_carry_the_state_sent() -> None:
    with pytest.raises(OAuthError, match="invalid_state"):
        code_from_redirect("http://localhost/cb?code=c&state=other", "mine", AS)
    assert code_from_redirect("http://localhost/cb?code=c&state=mine", "mine", AS) == "c"


def test_iss_is_compared_as_a_plain_string_and_required_where_promised() -> None:
    with pytest.raises(OAuthError, match="invalid_issuer"):
        code_from_redirect("http://localhost/cb?code=c&state=s&iss=https://as.example/tenant/", "s", AS)
    promised = ServerMetadata(AS.issuer, "", "", raw={"authorization_response_iss_parameter_supported": True})
    with pytest.raises(OAuthError, match="invalid_issuer"):
        code_from_redirect("http://localhost/cb?code=c&state=s", "s", promised)
    assert code_from_redirect(f"http://localhost/cb?code=c&state=s&iss={AS.issuer}", "s", promised) == "c"


def test_an_error_response_becomes_an_oauth_error_with_its_code() -> None:
    with pytest.raises(OAuthError, match="access_denied"):
        code_from_redirect("http://localhost/cb?error=access_denied&state=s", "s", AS)


@requirement("auth-pkce-s256")
def test_the_pkce_challenge_is_the_s256_of_the_verifier() -> None:
    import hashlib

    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    expected = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == expected


def test_the_token_endpoint_authentication_follows_registration_then_the_servers_list() -> None:
    secret = ClientCredentials("id", "s")
    only_post = ServerMetadata(
        "i", "", "", raw={"token_endpoint_auth_methods_supported": ["client_secret_post"]}
    )
    assert auth_method(secret, only_post) == "client_secret_post"
    assert auth_method(secret, AS) == "client_secret_basic"  # RFC 8414's default
    assert auth_method(ClientCredentials("id"), AS) == "none"
    assert auth_method(ClientCredentials("id", "s", "client_secret_post"), AS) == "client_secret_post"


def test_basic_authentication_url_encodes_the_id_and_secret() -> None:
    form: dict[str, str] = {}
    headers = authenticate(ClientCredentials("a:b", "c d"), AS, form)
    assert base64.b64decode(headers["Authorization"][6:]) == b"a%3Ab:c%20d" and form == {}
