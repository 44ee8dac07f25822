"""DPoP (RFC 9449) at the protected server, end to end: the real oidc-provider binds tokens to the client's
key, mcpkit's OAuthClient proves possession on each request, and each broken proof is refused with the
DPoP challenge's error (§7.1)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import jwt
import pytest
from auth_server import (
    MCP_PORT,
    MCP_SCOPES,
    METADATA,
    RESOURCE,
    AuthServer,
    authorization_server,
    mcp_app,
)

import peers
from mcpkit.auth import (
    SCOPE_KEY,
    AccessToken,
    DPoPChecker,
    InMemoryReplayStore,
    IntrospectionVerifier,
    JWTVerifier,
    protect,
)
from mcpkit.auth.dpop import DPoPOption
from mcpkit.client.client import connect_http
from mcpkit.client.oauth import ClientCredentials, OAuthClient
from mcpkit.client.oauth.dpop import DPoP, access_token_hash
from messages import HEADERS, INITIALIZE

pytestmark = pytest.mark.anyio

ALGS = 'algs="ES256 ES384 PS256 RS256 EdDSA"'


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


@asynccontextmanager
async def protected(
    provider: AuthServer, dpop: DPoPOption | DPoPChecker = "allowed", app: Any = None
) -> AsyncIterator[str]:
    check = JWTVerifier(issuer=provider.issuer, audience=RESOURCE)
    wrapped = protect(
        app or mcp_app(),
        verifier=check,
        resource=RESOURCE,
        authorization_servers=[provider.issuer],
        scopes_supported=MCP_SCOPES,
        required_scopes=["mcp:tools"],
        dpop=dpop,
    )
    try:
        async with peers.serving(wrapped, port=MCP_PORT):
            yield RESOURCE
    finally:
        await check.aclose()


async def bound_token(provider: AuthServer, key: DPoP, client: str = "mcp-service") -> str:
    """A client_credentials token bound to `key` (a proof at the token endpoint, RFC 9449 §5)."""
    url = f"{provider.issuer}/token"
    form = {"grant_type": "client_credentials", "scope": "mcp:tools", "resource": RESOURCE}
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            url,
            data=form,
            auth=(client, f"{client}-secret"),
            headers={"DPoP": key.proof("POST", url)},
        )
    assert answer.status_code == 200 and answer.json()["token_type"] == "DPoP", answer.text
    return str(answer.json()["access_token"])


async def post(url: str, headers: dict[str, str], method: str = "POST") -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.request(method, url, json=INITIALIZE, headers={**HEADERS, **headers})


def with_proof(token: str, proof: str) -> dict[str, str]:
    return {"authorization": f"DPoP {token}", "dpop": proof}


def dpop_error(answer: httpx.Response) -> str:
    """The DPoP challenge's error and description (the last WWW-Authenticate)."""
    value = answer.headers.get_list("www-authenticate")[-1]
    assert value.startswith("DPoP ") and value.endswith(ALGS), value
    return value.split('error="', 1)[1].split('", algs=')[0] if 'error="' in value else ""


def forged(key: DPoP, token: str, typ: str = "dpop+jwt", **changes: Any) -> str:
    """A proof by `key` for a POST to the resource, with claims changed (None removes one)."""
    claims = {"jti": "j-" + str(time.time_ns()), "htm": "POST", "htu": RESOURCE, "iat": int(time.time())}
    claims["ath"] = access_token_hash(token)
    claims.update(changes)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(
        claims, key._private_key(), algorithm="ES256", headers={"typ": typ, "jwk": key.public_jwk}
    )


async def test_the_oauth_client_gets_a_bound_token_and_proves_possession_on_each_request(
    provider: AuthServer,
) -> None:
    inner, seen = mcp_app(), []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope.get(SCOPE_KEY))
        await inner(scope, receive, send)

    auth = OAuthClient(
        RESOURCE, grant="client_credentials", client=ClientCredentials("mcp-service", "mcp-service-secret")
    )
    async with protected(provider, app=recording) as url, connect_http(url, auth=auth, timeout=10) as client:
        result = await client.call_tool("echo", {"text": "bound"})
        again = await client.call_tool("echo", {"text": "twice"})
    assert (result["content"][0]["text"], again["content"][0]["text"]) == ("bound", "twice")
    assert auth.dpop is not None
    tokens: list[AccessToken] = [a for a in seen if a is not None]
    assert len(tokens) >= 3 and {a.claims["cnf"]["jkt"] for a in tokens} == {auth.dpop.thumbprint}


async def test_without_a_token_the_challenge_offers_dpop_beside_bearer(provider: AuthServer) -> None:
    async with protected(provider) as url:
        answer = await post(url, {})
    assert answer.status_code == 401
    assert answer.headers.get_list("www-authenticate") == [
        f'Bearer resource_metadata="{METADATA}", scope="mcp:tools"',
        f'DPoP resource_metadata="{METADATA}", scope="mcp:tools", {ALGS}',
    ]


async def test_a_valid_proof_with_its_bound_token_is_let_through(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        answer = await post(url, with_proof(token, key.proof("POST", url, token)))
    assert answer.status_code == 200, answer.text


async def test_a_bound_token_without_a_proof_is_refused(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        no_proof = await post(url, {"authorization": f"DPoP {token}"})
        as_bearer = await post(url, {"authorization": f"Bearer {token}"})  # RFC 9449 §7.2
    assert no_proof.status_code == 401
    assert (
        dpop_error(no_proof)
        == 'invalid_dpop_proof", error_description="DPoP credentials need a DPoP proof header'
    )
    assert as_bearer.status_code == 401
    assert dpop_error(as_bearer).startswith(
        'invalid_token", error_description="a DPoP-bound token needs the DPoP'
    )
    assert "error=" not in as_bearer.headers.get_list("www-authenticate")[0]


async def test_a_proof_made_for_another_url_or_method_is_refused(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        other_url = await post(url, with_proof(token, key.proof("POST", url + "/other", token)))
        other_method = await post(url, with_proof(token, key.proof("GET", url, token)))
        with_query = await post(url, with_proof(token, key.proof("POST", url + "?x=1", token)))
    assert other_url.status_code == other_method.status_code == 401
    assert "another URL" in dpop_error(other_url)
    assert "another HTTP method" in dpop_error(other_method)
    assert with_query.status_code == 200  # htu leaves the query out (§4.2)


async def test_a_replayed_proof_is_refused(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        proof = key.proof("POST", url, token)
        first = await post(url, with_proof(token, proof))
        replay = await post(url, with_proof(token, proof))
    assert first.status_code == 200
    assert replay.status_code == 401 and "used before" in dpop_error(replay)


async def test_a_proof_by_another_key_than_the_tokens_is_refused(provider: AuthServer) -> None:
    token = await bound_token(provider, DPoP())
    async with protected(provider) as url:
        answer = await post(url, with_proof(token, DPoP().proof("POST", url, token)))
    assert answer.status_code == 401
    assert dpop_error(answer).startswith('invalid_token", error_description="the proof\'s key is not the key')


@pytest.mark.parametrize("iat_offset", [-120, 60])
async def test_a_stale_or_future_proof_is_refused(provider: AuthServer, iat_offset: int) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        answer = await post(url, with_proof(token, forged(key, token, iat=int(time.time()) + iat_offset)))
    assert answer.status_code == 401 and "outside the accepted window" in dpop_error(answer)


async def test_a_proof_whose_ath_is_not_the_tokens_hash_is_refused(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        wrong = await post(url, with_proof(token, key.proof("POST", url, token + "x")))
        missing = await post(url, with_proof(token, forged(key, token, ath=None)))
    assert wrong.status_code == missing.status_code == 401
    assert "ath" in dpop_error(wrong) and "ath" in dpop_error(missing)


async def test_malformed_and_hostile_proofs_are_refused_and_the_server_keeps_serving(
    provider: AuthServer,
) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    private = {**key.public_jwk, "d": "AAAA"}
    other_curve = {**key.public_jwk, "crv": "P-384"}
    bad_point = {**key.public_jwk, "x": "AAAA"}
    hostile = [
        "not-a-jwt",
        forged(key, token, typ="JWT"),
        jwt.encode(  # an unsigned proof: PyJWT takes no key for "none", its stubs want one
            {"htm": "POST"},
            None,  # type: ignore[arg-type]
            algorithm="none",
            headers={"typ": "dpop+jwt", "jwk": key.public_jwk},
        ),
        jwt.encode(
            {"htm": "POST"}, "s" * 32, algorithm="HS256", headers={"typ": "dpop+jwt", "jwk": key.public_jwk}
        ),
        jwt.encode({}, key._private_key(), algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": private}),
        jwt.encode(
            {}, key._private_key(), algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": other_curve}
        ),
        jwt.encode({}, key._private_key(), algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": bad_point}),
        jwt.encode({}, key._private_key(), algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": "x"}),
        forged(key, token, jti=None),
        forged(key, token, jti="j" * 300),
        forged(key, token, iat="now"),
        "x" * 9000,
    ]
    async with protected(provider) as url:
        answers = [await post(url, with_proof(token, proof)) for proof in hostile]
        ok = await post(url, with_proof(token, key.proof("POST", url, token)))
    assert [a.status_code for a in answers] == [401] * len(hostile)
    assert all(dpop_error(a).startswith('invalid_dpop_proof"') for a in answers)
    assert ok.status_code == 200


async def test_two_dpop_headers_are_refused(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider) as url:
        headers = [("authorization", f"DPoP {token}"), ("dpop", key.proof("POST", url, token))]
        headers.append(("dpop", key.proof("POST", url, token)))
        async with httpx.AsyncClient() as http:
            answer = await http.post(url, json=INITIALIZE, headers=[*HEADERS.items(), *headers])
    assert answer.status_code == 401 and "more than one DPoP header" in dpop_error(answer)


async def test_dpop_required_refuses_bearer_tokens_and_challenges_with_dpop_alone(
    provider: AuthServer,
) -> None:
    bearer = await provider.token()
    async with protected(provider, dpop="required") as url:
        answer = await post(url, {"authorization": f"Bearer {bearer}"})
    assert answer.status_code == 401
    assert answer.headers.get_list("www-authenticate") == [
        f'DPoP resource_metadata="{METADATA}", scope="mcp:tools", error="invalid_token", '
        f'error_description="only DPoP-bound tokens are accepted", {ALGS}'
    ]


async def test_an_unbound_token_presented_with_a_proof_is_refused(provider: AuthServer) -> None:
    key, bearer = DPoP(), await provider.token()
    async with protected(provider) as url:
        answer = await post(url, with_proof(bearer, key.proof("POST", url, bearer)))
        plain = await post(url, {"authorization": f"Bearer {bearer}"})
    assert answer.status_code == 401 and "not DPoP-bound" in dpop_error(answer)
    assert plain.status_code == 200


async def test_with_dpop_disabled_the_challenge_is_bearer_alone_and_bound_tokens_are_refused(
    provider: AuthServer,
) -> None:
    key = DPoP()
    token = await bound_token(provider, key)
    async with protected(provider, dpop="disabled") as url:
        none = await post(url, {})
        bound = await post(url, {"authorization": f"Bearer {token}"})
    assert none.headers.get_list("www-authenticate") == [
        f'Bearer resource_metadata="{METADATA}", scope="mcp:tools"'
    ]
    assert bound.status_code == 401 and 'error="invalid_token"' in bound.headers["www-authenticate"]


async def test_with_server_nonces_the_oauth_client_retries_with_the_nonce_it_was_given(
    provider: AuthServer,
) -> None:
    checker = DPoPChecker(use_nonce=True)
    key = DPoP()
    token = await bound_token(provider, key)
    auth = OAuthClient(
        RESOURCE, grant="client_credentials", client=ClientCredentials("mcp-service", "mcp-service-secret")
    )
    async with protected(provider, dpop=checker) as url:
        without = await post(url, with_proof(token, key.proof("POST", url, token)))
        stale = await post(url, with_proof(token, forged(key, token, nonce="1.AAAAAAAAAAAAAAAAAAAAAA")))
        async with connect_http(url, auth=auth, timeout=10) as client:
            result = await client.call_tool("echo", {"text": "with nonce"})
    assert without.status_code == 401 and dpop_error(without).startswith('use_dpop_nonce"')
    assert without.headers["dpop-nonce"] == checker.nonce()
    assert stale.status_code == 401 and dpop_error(stale).startswith('use_dpop_nonce"')
    assert result["content"][0]["text"] == "with nonce"


async def test_an_opaque_bound_token_is_checked_through_introspections_cnf(provider: AuthServer) -> None:
    key = DPoP()
    token = await bound_token(provider, key, client="opaque-service")
    check = IntrospectionVerifier(
        provider.introspection_endpoint,
        client_id="resource-server",
        client_secret="resource-server-secret",
        audience=RESOURCE,
        issuer=provider.issuer,
    )
    app = protect(mcp_app(), verifier=check, resource=RESOURCE, authorization_servers=[provider.issuer])
    async with peers.serving(app, port=MCP_PORT):
        proven = await post(RESOURCE, with_proof(token, key.proof("POST", RESOURCE, token)))
        other_key = await post(RESOURCE, with_proof(token, DPoP().proof("POST", RESOURCE, token)))
        as_bearer = await post(RESOURCE, {"authorization": f"Bearer {token}"})
    await check.aclose()
    assert proven.status_code == 200, proven.text
    assert other_key.status_code == as_bearer.status_code == 401


def test_dpop_options_are_checked_when_protecting() -> None:
    with pytest.raises(ValueError, match="dpop must be"):
        protect(
            mcp_app(),
            verifier=JWTVerifier(issuer="x", audience=RESOURCE),
            resource=RESOURCE,
            authorization_servers=["x"],
            dpop="sometimes",  # type: ignore[arg-type]
        )
    with pytest.raises(ValueError, match="asymmetric"):
        DPoPChecker(algorithms=["HS256"])
    with pytest.raises(ValueError, match="max_replay_entries"):
        DPoPChecker(replays=InMemoryReplayStore(10), max_replay_entries=10)
