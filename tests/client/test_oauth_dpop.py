"""Client DPoP (RFC 9449): the proofs themselves, then OAuthClient against a DPoP-aware server on uvicorn."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from typing import Any

import httpx
import jwt
import pytest
from dpop_peer import DPoPMCP, DPoPSettings, thumbprint
from oauth_peer import Settings

import peers
from mcpkit.client import connect_http
from mcpkit.client.oauth import DPoP, OAuthClient
from mcpkit.client.oauth.challenge import parse_challenge
from mcpkit.client.oauth.dpop import is_nonce_challenge, is_token_nonce_challenge, post_token_request, present
from mcpkit.client.oauth.store import Tokens

pytestmark = [pytest.mark.anyio, pytest.mark.both_loops]


def verified(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The proof's header and its claims, the signature checked with the key in its own header."""
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], "ES256").key
    return header, jwt.decode(proof, key, algorithms=["ES256"])


def b64_sha256(text: str) -> str:
    import base64

    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


# ---- the proof ----------------------------------------------------------------------------------------


def test_a_proof_is_an_es256_dpop_jwt_signed_by_the_public_key_it_carries() -> None:
    dpop = DPoP()
    header, claims = verified(dpop.proof("post", "https://as.example/token?x=1#frag"))
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert header["jwk"] == dpop.public_jwk and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == "https://as.example/token"
    assert abs(claims["iat"] - time.time()) < 60 and "ath" not in claims and "nonce" not in claims
    assert thumbprint(header["jwk"]) == dpop.thumbprint


def test_each_proof_has_its_own_jti_and_the_same_key() -> None:
    dpop = DPoP()
    proofs = [verified(dpop.proof("GET", "https://rs.example/mcp")) for _ in range(20)]
    assert len({claims["jti"] for _, claims in proofs}) == 20
    assert len({header["jwk"]["x"] for header, _ in proofs}) == 1


def test_a_proof_for_a_resource_request_hashes_the_access_token_into_ath() -> None:
    _, claims = verified(DPoP().proof("POST", "https://rs.example/mcp", "token-123"))
    assert claims["ath"] == b64_sha256("token-123")


def test_a_nonce_is_sent_only_to_the_origin_that_gave_it() -> None:
    dpop = DPoP()
    given = httpx.Response(400, headers={"DPoP-Nonce": "n-1"})
    assert dpop.remember_nonce("https://as.example/token", given)
    assert not dpop.remember_nonce("https://as.example/other", given)  # the same nonce is not new
    assert verified(dpop.proof("POST", "https://as.example/token"))[1]["nonce"] == "n-1"
    assert "nonce" not in verified(dpop.proof("POST", "https://rs.example/mcp"))[1]
    assert "nonce" not in verified(dpop.proof("POST", "https://as.example:8443/token"))[1]


@pytest.mark.parametrize("bad", ['has"quote', "has space", "x" * 513, ""])
def test_a_nonce_outside_the_rfcs_syntax_or_the_length_limit_is_ignored(bad: str) -> None:
    dpop = DPoP()
    assert not dpop.remember_nonce(
        "https://as.example/token", httpx.Response(400, headers={"DPoP-Nonce": bad})
    )
    assert dpop.nonce_for("https://as.example/token") is None


def test_nonces_are_kept_for_at_most_max_origins_servers() -> None:
    dpop = DPoP(max_origins=3)
    for port in range(10):
        dpop.remember_nonce(
            f"https://as.example:{port}/t", httpx.Response(200, headers={"DPoP-Nonce": f"n{port}"})
        )
    assert sum(dpop.nonce_for(f"https://as.example:{port}/t") is not None for port in range(10)) == 3
    assert (
        dpop.nonce_for("https://as.example:9/t") == "n9" and dpop.nonce_for("https://as.example:0/t") is None
    )


def test_the_token_endpoints_nonce_challenge_is_a_400_use_dpop_nonce_with_a_nonce() -> None:
    nonce = {"DPoP-Nonce": "n"}
    assert is_token_nonce_challenge(httpx.Response(400, headers=nonce, json={"error": "use_dpop_nonce"}))
    assert not is_token_nonce_challenge(httpx.Response(400, json={"error": "use_dpop_nonce"}))
    assert not is_token_nonce_challenge(httpx.Response(400, headers=nonce, json={"error": "invalid_grant"}))
    assert not is_token_nonce_challenge(httpx.Response(400, headers=nonce, content=b"not json"))
    assert not is_token_nonce_challenge(httpx.Response(401, headers=nonce, json={"error": "use_dpop_nonce"}))


def test_the_resource_servers_nonce_challenge_is_a_401_dpop_challenge_with_a_nonce() -> None:
    nonce = {"DPoP-Nonce": "n"}
    challenge = {**nonce, "WWW-Authenticate": 'DPoP error="use_dpop_nonce", error_description="x"'}
    assert is_nonce_challenge(httpx.Response(401, headers=challenge))
    assert not is_nonce_challenge(
        httpx.Response(401, headers={"WWW-Authenticate": 'DPoP error="use_dpop_nonce"'})
    )
    assert not is_nonce_challenge(httpx.Response(401, headers={**nonce, "WWW-Authenticate": "Bearer"}))
    assert not is_nonce_challenge(httpx.Response(400, headers=challenge))


def test_a_bound_token_goes_out_as_dpop_with_a_proof_and_a_bearer_token_without_one() -> None:
    dpop = DPoP()
    request = httpx.Request("POST", "https://rs.example/mcp?session=1")
    present(request, Tokens("bound", token_type="DPoP"), dpop)
    assert request.headers["Authorization"] == "DPoP bound"
    _, claims = verified(request.headers["DPoP"])
    assert claims["htu"] == "https://rs.example/mcp" and claims["ath"] == b64_sha256("bound")
    present(request, Tokens("plain", token_type="Bearer"), dpop)
    assert request.headers["Authorization"] == "Bearer plain" and "DPoP" not in request.headers


async def test_a_nonce_retry_builds_the_token_request_afresh_and_happens_once() -> None:
    sent: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        sent.append(request)  # a new nonce every time: a server that can never be satisfied
        headers = {"DPoP-Nonce": f"n{len(sent)}"}
        return httpx.Response(400, headers=headers, json={"error": "use_dpop_nonce"})

    builds = iter(range(100))

    def build() -> tuple[dict[str, str], dict[str, str]]:
        return {"client_assertion": f"assertion-{next(builds)}"}, {}

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as http:
        response, form = await post_token_request(http, "https://as.example/token", build, DPoP())
    assert response.status_code == 400 and len(sent) == 2
    assert [r.content for r in sent] == [b"client_assertion=assertion-0", b"client_assertion=assertion-1"]
    assert "nonce" not in verified(sent[0].headers["DPoP"])[1]
    assert verified(sent[1].headers["DPoP"])[1]["nonce"] == "n1" and form["client_assertion"] == "assertion-1"


@pytest.mark.parametrize(
    ("header", "offered"),
    [
        ('DPoP algs="ES256", resource_metadata="https://rs.example/prm"', True),
        ('Bearer realm="mcp", DPoP algs="ES256"', True),
        ('Bearer resource_metadata="https://dpop.example/prm"', False),
        ('Bearer error="invalid_token", dpop="no"', False),
    ],
)
def test_a_challenge_offers_dpop_only_when_dpop_is_one_of_its_schemes(header: str, offered: bool) -> None:
    assert parse_challenge(header).dpop_offered is offered


# ---- OAuthClient against a DPoP-aware authorization server and MCP endpoint -------------------------------


def serving(app: DPoPMCP) -> Any:
    return peers.serving(app, "/mcp", lifespan="off")


async def follow_once(url: str) -> str:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        return (await http.get(url)).headers["location"]


async def use(url: str, auth: OAuthClient, calls: int = 2) -> None:
    async with connect_http(url, auth=auth, timeout=10) as client:
        await client.list_tools()
        for _ in range(calls):
            assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"


async def test_a_server_listing_es256_gets_bound_tokens_presented_with_a_fresh_proof_per_request() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    assert app.errors == []
    assert len(app.proofs["token"]) == 1 and len(app.bound) == 1
    assert len(app.proofs["mcp"]) >= 4  # initialize, initialized, tools/list, two tools/call
    assert len(set(app.jtis)) == len(app.jtis)


async def test_the_token_endpoints_nonce_challenge_is_answered_once_with_its_nonce() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(as_nonce=True))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    assert app.errors == [] and app.nonce_refusals["as"] == 1
    assert [p["nonce"] for p in app.proofs["token"]] == [app.nonce["as"]]
    assert len(app.seen["authorize"]) == 1  # the code was not spent on the refused attempt


async def test_the_mcp_servers_nonce_challenge_is_retried_once_and_its_nonce_reused_later() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(as_nonce=True, rs_nonce=True))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once), calls=3)
    assert app.errors == [] and app.nonce_refusals == {"as": 1, "rs": 1}
    assert {p.get("nonce") for p in app.proofs["mcp"]} == {app.nonce["rs"]}
    assert len(app.seen["authorize"]) == 1  # a nonce challenge is not a reason to authorize again


async def test_a_resource_server_that_never_accepts_a_nonce_gets_one_retry_per_request_not_a_loop() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(rs_nonce=True, rotate=True))
    async with serving(app) as url:
        with pytest.raises(Exception):  # noqa: B017 (the transport's error for the final 401)
            await use(url, OAuthClient(url, user_agent=follow_once))
    # the era probe, then initialize: each sent twice (the second time with the nonce), and no more
    assert sorted(Counter(app.refused_bodies).values()) == [2, 2] and len(app.seen["authorize"]) == 1


async def test_a_token_endpoint_that_never_accepts_a_nonce_fails_authorization_after_one_retry() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(as_nonce=True, rotate=True))
    async with serving(app) as url:
        with pytest.raises(Exception) as caught:
            await use(url, OAuthClient(url, user_agent=follow_once))
    assert "use_dpop_nonce" in str(caught.value) and app.nonce_refusals["as"] == 2


async def test_without_es256_in_the_metadata_or_with_dpop_off_no_proof_is_sent() -> None:
    cases: list[tuple[DPoPMCP, dict[str, Any]]] = [
        (DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(list_es256=False)), {}),
        (DPoPMCP(Settings(challenge_scope="read write")), {"dpop": False}),
    ]
    for app, auth in cases:
        async with serving(app) as url:
            with pytest.raises(Exception):  # noqa: B017 (this token endpoint insists on a proof)
                await use(url, OAuthClient(url, user_agent=follow_once, **auth))
        assert app.errors == ["no DPoP proof"] and app.bound == {}


async def test_a_server_challenging_with_bearer_alone_gets_a_bearer_token_from_a_dpop_capable_as() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(offer=False, proof_required=False))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    assert app.errors == [] and app.bound == {} and app.proofs["token"] == []


async def test_a_client_that_requires_dpop_proves_its_token_requests_even_when_not_offered() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write"), DPoPSettings(offer=False))
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once, dpop=DPoP(required=True)))
    assert app.errors == [] and len(app.proofs["token"]) == 1 and len(app.proofs["mcp"]) >= 4


async def test_a_refresh_is_proved_with_the_same_key_and_keeps_the_token_bound() -> None:
    app = DPoPMCP(Settings(challenge_scope="read write", expires_in=1))  # inside the 30 s leeway
    async with serving(app) as url:
        await use(url, OAuthClient(url, user_agent=follow_once))
    grants = [t["grant_type"] for t in app.seen["token"]]
    assert grants[0] == "authorization_code" and "refresh_token" in grants[1:]
    assert app.errors == [] and len(set(app.bound.values())) == 1 and len(app.bound) >= 2
