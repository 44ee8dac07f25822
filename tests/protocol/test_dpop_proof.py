"""The resource server's DPoP rules (protocol/dpop_proof.py, RFC 9449 §4.3, §6, §7, §9; RFC 7638)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.client.oauth.dpop import DPoP
from mcpkit.protocol.dpop_proof import (
    ProofClaims,
    ReplayCache,
    ReplayCheckUnavailable,
    access_token_hash,
    bound_thumbprint,
    check_claims,
    check_header,
    dpop_challenge,
    make_nonce,
    nonce_is_current,
    normalize_uri,
    proof_header,
    thumbprint,
)
from mcpkit.protocol.resource_auth import AuthRefusal, credentials

# RFC 7638 §3.1's example key and its thumbprint
RFC7638_KEY = {
    "kty": "RSA",
    "n": (
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWK"
        "RXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMic"
        "AtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3"
        "XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
    ),
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}
TOKEN = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
URI = "https://rs.test/mcp"


def refusal(call: Any) -> AuthRefusal:
    with pytest.raises(AuthRefusal) as caught:
        call()
    return caught.value


def expect(**changes: Any) -> ProofClaims:
    values: dict[str, Any] = {
        "method": "POST",
        "uris": (URI,),
        "access_token": TOKEN,
        "now": 1000.0,
        "max_age": 60.0,
        "leeway": 5.0,
    }
    return ProofClaims(**{**values, **changes})


def claims(**changes: Any) -> dict[str, Any]:
    values = {"jti": "a", "htm": "POST", "htu": URI, "iat": 1000, "ath": access_token_hash(TOKEN)}
    return {k: v for k, v in {**values, **changes}.items() if v is not None}


def test_the_thumbprint_is_rfc_7638s_over_the_required_members_only() -> None:
    assert thumbprint(RFC7638_KEY) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    key = DPoP()
    assert thumbprint(key.public_jwk) == key.thumbprint  # the client's own computation agrees
    assert refusal(lambda: thumbprint({"kty": "EC", "x": "a"})).error == "invalid_dpop_proof"


def test_the_header_needs_dpop_typ_an_accepted_algorithm_and_a_public_key_of_its_type() -> None:
    jwk = DPoP().public_jwk
    assert check_header({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk}, ["ES256"]) == ("ES256", jwk)
    bad = [
        {"typ": "JWT", "alg": "ES256", "jwk": jwk},
        {"typ": "dpop+jwt", "alg": "none", "jwk": jwk},
        {"typ": "dpop+jwt", "alg": "HS256", "jwk": jwk},
        {"typ": "dpop+jwt", "alg": "ES384", "jwk": jwk},  # not in the accepted list given
        {"typ": "dpop+jwt", "alg": "ES256"},
        {"typ": "dpop+jwt", "alg": "ES256", "jwk": {**jwk, "d": "secret"}},
        {"typ": "dpop+jwt", "alg": "ES256", "jwk": {**jwk, "crv": "P-384"}},
        {"typ": "dpop+jwt", "alg": "RS256", "jwk": jwk},
    ]
    for header in bad:
        assert refusal(lambda h=header: check_header(h, ["ES256", "RS256"])).scheme == "DPoP"


def test_claims_must_name_this_request_be_fresh_and_carry_the_tokens_hash() -> None:
    assert check_claims(claims(), expect()) == ("a", 1000.0)
    assert check_claims(claims(htu=URI + "?q=1#f"), expect()) == ("a", 1000.0)
    assert check_claims(claims(iat=940 - 5), expect()) == ("a", 935.0)
    for bad in (
        claims(jti=None),
        claims(jti="j" * 257),
        claims(htm="GET"),
        claims(htu="https://rs.test/other"),
        claims(htu=7),
        claims(iat=934),
        claims(iat=1006),
        claims(iat=True),
        claims(ath=None),
        claims(ath=access_token_hash(TOKEN + "x")),
    ):
        assert refusal(lambda c=bad: check_claims(c, expect())).error == "invalid_dpop_proof"


def test_uris_compare_without_case_default_port_query_or_fragment() -> None:
    assert normalize_uri("HTTPS://RS.test:443/mcp?x#y") == "https://rs.test/mcp"
    assert normalize_uri("http://rs.test:8080") == "http://rs.test:8080/"
    assert normalize_uri("http://[::1]:80/a") == "http://[::1]/a"
    assert normalize_uri("http://rs.test:notaport/a") == ""


def test_the_bound_key_is_cnf_jkt_and_a_malformed_one_refuses_the_token() -> None:
    assert bound_thumbprint({"cnf": {"jkt": "abc"}}) == "abc"
    assert bound_thumbprint({"cnf": {"x5t#S256": "abc"}}) is None
    assert bound_thumbprint({}) is None
    assert refusal(lambda: bound_thumbprint({"cnf": {"jkt": 5}})).error == "invalid_token"


def test_nonces_last_their_slot_and_the_next_and_cannot_be_made_without_the_secret() -> None:
    secret = b"s" * 32
    nonce = make_nonce(secret, 10)
    assert nonce_is_current(secret, nonce, 10) and nonce_is_current(secret, nonce, 11)
    assert not nonce_is_current(secret, nonce, 12)
    assert not nonce_is_current(b"t" * 32, nonce, 10)
    assert not nonce_is_current(secret, "10.forged", 10)
    assert not nonce_is_current(secret, 10, 10)
    assert not nonce_is_current(secret, "x" * 100, 10)


def test_the_replay_cache_refuses_a_jti_twice_until_its_proof_has_expired() -> None:
    cache = ReplayCache(max_entries=2)
    assert cache.add("k", "1", until=10, now=0)
    assert not cache.add("k", "1", until=10, now=5)
    assert not cache.add("k", "1", until=10, now=10)  # at `until` its proof still passes
    assert cache.add("other-key", "1", until=10, now=5)
    assert cache.add("k", "1", until=30, now=11)  # expired, so accepted again (its iat is too old by then)
    with pytest.raises(ValueError):
        ReplayCache(0)


def test_a_full_replay_cache_refuses_rather_than_forget_a_live_entry() -> None:
    cache = ReplayCache(max_entries=2)
    assert cache.add("victim", "v", until=100, now=0)
    assert cache.add("attacker", "a0", until=20, now=0)
    with pytest.raises(ReplayCheckUnavailable) as full:
        cache.add("attacker", "a1", until=20, now=1)
    assert full.value.retry_after == 19  # when the entry that expires first goes
    assert not cache.add("victim", "v", until=100, now=2)
    assert cache.add("attacker", "a1", until=40, now=21)  # a0 expired, though stored after the victim's
    assert not cache.add("victim", "v", until=100, now=50)
    assert len(cache) == 1  # a1 went at 40, the victim's stays


def test_one_dpop_header_at_most_and_of_bounded_length() -> None:
    assert proof_header([" p "], 10) == "p"
    assert proof_header([], 10) is None
    assert refusal(lambda: proof_header(["a", "b"], 10)).description == "more than one DPoP header"
    assert "longer than" in refusal(lambda: proof_header(["p" * 11], 10)).description


def test_credentials_read_the_bearer_or_dpop_scheme() -> None:
    assert credentials([f"DPoP {TOKEN}"], 100) == ("dpop", TOKEN)
    assert credentials([f"bearer {TOKEN}"], 100) == ("bearer", TOKEN)
    assert credentials([f"DPoP {TOKEN}"], 100, ("bearer",)) is None
    assert refusal(lambda: credentials(["DPoP a b"], 100)).status == 400


def test_the_dpop_challenge_names_algs_and_keeps_its_parameters_parseable() -> None:
    assert dpop_challenge(["ES256", "EdDSA"]) == 'DPoP algs="ES256 EdDSA"'
    value = dpop_challenge(["ES256"], "https://rs.test/m", ["a"], "invalid_dpop_proof", 'bad, "quoted"')
    assert value == (
        'DPoP resource_metadata="https://rs.test/m", scope="a", error="invalid_dpop_proof", '
        'error_description="bad; ?quoted?", algs="ES256"'
    )
