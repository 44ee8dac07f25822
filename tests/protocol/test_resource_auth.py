"""The resource server's pure rules (protocol/resource_auth.py, basic/authorization; RFC 6750, 8707, 9728)."""

from __future__ import annotations

import pytest

from mcpkit.protocol.dpop_proof import dpop_challenge
from mcpkit.protocol.resource_auth import (
    AuthRefusal,
    InvalidToken,
    bearer_token,
    challenge,
    check_times,
    metadata_document,
    metadata_paths,
    metadata_url,
    query_carries_token,
    same_resource,
    scope_challenge,
    token_from_claims,
)


def test_metadata_lives_at_the_path_suffixed_well_known_uri_then_the_root_one() -> None:
    assert metadata_paths("https://h.test/public/mcp") == (
        "/.well-known/oauth-protected-resource/public/mcp",
        "/.well-known/oauth-protected-resource",
    )
    assert metadata_paths("https://h.test/") == ("/.well-known/oauth-protected-resource",)
    assert (
        metadata_url("https://h.test:8443/mcp")
        == "https://h.test:8443/.well-known/oauth-protected-resource/mcp"
    )


def test_the_metadata_document_needs_an_authorization_server() -> None:
    with pytest.raises(ValueError, match="at least one"):
        metadata_document("https://h.test/mcp", [])
    assert (
        metadata_document("https://h.test/mcp", ["https://as.test"], resource_name="R")["resource_name"]
        == "R"
    )


def test_a_challenge_quotes_its_values_and_drops_characters_rfc_6750_forbids() -> None:
    value = challenge("https://h.test/m", ("a", "b"), "invalid_token", 'bad "quote" \\ and\nnewline')
    assert value == (
        'Bearer resource_metadata="https://h.test/m", scope="a b", error="invalid_token", '
        'error_description="bad ?quote? ? and?newline"'
    )
    assert challenge("https://h.test/m") == 'Bearer resource_metadata="https://h.test/m"'


def test_the_bearer_and_dpop_challenges_quote_and_escape_a_value_alike() -> None:
    """RFC 6750 §3 and RFC 9449 §7.1 share the auth-param syntax; protect() sends both challenges at once,
    so a comma in a description must not split a value for a reader that splits the header at commas."""
    description = 'expired, "again" \\ since\nnoon'
    bearer = challenge("https://h.test/m", ("a", "b"), "invalid_token", description)
    dpop = dpop_challenge(("ES256",), "https://h.test/m", ("a", "b"), "invalid_token", description)
    params = (
        'resource_metadata="https://h.test/m", scope="a b", error="invalid_token", '
        'error_description="expired; ?again? ? since?noon"'
    )
    assert bearer == f"Bearer {params}"
    assert dpop == f'DPoP {params}, algs="ES256"'


def test_the_bearer_token_comes_from_one_authorization_header() -> None:
    assert bearer_token(["Bearer abc.DEF-_~+/=="], 100) == "abc.DEF-_~+/=="
    assert bearer_token(["bearer   tok  "], 100) == "tok"
    assert bearer_token([], 100) is None
    assert bearer_token(["Basic dXNlcg=="], 100) is None
    for values, status, error in (
        (["Bearer a", "Bearer b"], 400, "invalid_request"),
        (["Bearer a b"], 400, "invalid_request"),
        (["Bearer"], 400, "invalid_request"),
        (["Bearer " + "a" * 101], 401, "invalid_token"),
    ):
        with pytest.raises(AuthRefusal) as refused:
            bearer_token(values, 100)
        assert (refused.value.status, refused.value.error) == (status, error)


def test_an_access_token_query_parameter_is_found_however_it_is_placed() -> None:
    assert query_carries_token(b"access_token=x")
    assert query_carries_token(b"a=1&access_token=")
    assert not query_carries_token(b"my_access_token=x")
    assert not query_carries_token(b"")


def test_resources_compare_as_uris_not_strings() -> None:
    assert same_resource("HTTPS://H.test:443/mcp/", "https://h.test/mcp")
    assert not same_resource("https://h.test/mcp", "https://h.test/mcp2")
    assert not same_resource("https://h.test/mcp", "http://h.test/mcp")
    assert not same_resource("https://h.test:8443/mcp", "https://h.test/mcp")
    assert not same_resource("https://h.test:bad/mcp", "https://h.test/mcp")


def test_a_scope_challenge_asks_for_the_required_scopes_and_keeps_the_known_granted_ones() -> None:
    assert scope_challenge(("w",), {"r", "x", "w"}, ["r", "w"]) == ("w", "r")
    assert scope_challenge(("w",), {"r"}, None) == ("w",)


def test_times_are_checked_with_the_leeway() -> None:
    check_times({"exp": 100, "nbf": 50}, now=150, leeway=60)
    with pytest.raises(InvalidToken, match="expired"):
        check_times({"exp": 100}, now=161, leeway=60)
    with pytest.raises(InvalidToken, match="not valid yet"):
        check_times({"nbf": 100}, now=39, leeway=60)
    with pytest.raises(InvalidToken, match="not a number"):
        check_times({"exp": True}, now=0, leeway=0)


def test_claims_become_an_access_token() -> None:
    token = token_from_claims({"sub": "u", "azp": "c", "scp": ["a", "b"], "exp": 5, "aud": ["x", "y"]})
    assert (token.subject, token.client_id, token.scopes, token.expires_at, token.audience) == (
        "u",
        "c",
        frozenset({"a", "b"}),
        5.0,
        ("x", "y"),
    )
    assert token_from_claims({}).audience == ()
