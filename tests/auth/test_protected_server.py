"""A protected MCP server (basic/authorization) on a real uvicorn, with JWT access tokens from a real
authorization server (npm oidc-provider): each refusal is checked for its exact status and challenge."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from auth_server import (
    MCP_PORT,
    MCP_SCOPES,
    METADATA,
    RESOURCE,
    AuthServer,
    authorization_server,
    protected,
    rsa_jwk,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

import peers
from mcpkit.auth import SCOPE_KEY, AccessToken, JWTVerifier
from mcpkit.client.client import connect_http
from mcpkit.client.oauth import ClientCredentials, OAuthClient
from messages import HEADERS, INITIALIZE

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


async def post(url: str, token: str | None = None, **headers: str) -> httpx.Response:
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as http:
        return await http.post(url, json=INITIALIZE, headers={**HEADERS, **headers})


def bearer(answer: httpx.Response) -> str:
    """The Bearer challenge (the first WWW-Authenticate; a DPoP one follows while DPoP is on)."""
    return answer.headers.get_list("www-authenticate")[0]


def invalid(description: str) -> str:
    return (
        f'Bearer resource_metadata="{METADATA}", scope="mcp:tools", error="invalid_token", '
        f'error_description="{description}"'
    )


async def test_a_request_without_a_token_gets_401_naming_the_metadata_and_the_scope(
    provider: AuthServer,
) -> None:
    async with protected(provider) as url:
        answer = await post(url)
    assert answer.status_code == 401
    assert bearer(answer) == f'Bearer resource_metadata="{METADATA}", scope="mcp:tools"'


async def test_the_metadata_is_served_at_the_path_suffixed_and_the_root_well_known_uri(
    provider: AuthServer,
) -> None:
    async with protected(provider), httpx.AsyncClient() as http:
        suffixed = await http.get(METADATA)
        root = await http.get(f"http://127.0.0.1:{MCP_PORT}/.well-known/oauth-protected-resource")
        posted = await http.post(METADATA)
    expected = {
        "resource": RESOURCE,
        "authorization_servers": [provider.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": list(MCP_SCOPES),
    }
    assert suffixed.status_code == root.status_code == 200
    assert suffixed.json() == root.json() == expected
    assert suffixed.headers["access-control-allow-origin"] == "*"
    assert posted.status_code == 405 and posted.headers["allow"] == "GET, HEAD, OPTIONS"


async def test_mcpkits_client_gets_a_client_credentials_token_from_the_provider_and_calls_a_tool(
    provider: AuthServer,
) -> None:
    auth = OAuthClient(
        RESOURCE,
        grant="client_credentials",
        client=ClientCredentials("mcp-service", "mcp-service-secret"),
        scope="mcp:tools",
    )
    async with protected(provider) as url, connect_http(url, auth=auth, timeout=10) as client:
        result = await client.call_tool("echo", {"text": "authorized"})
    assert result["content"][0]["text"] == "authorized"


async def test_the_verified_token_reaches_the_wrapped_app_in_its_scope(provider: AuthServer) -> None:
    seen: list[AccessToken] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return
        seen.append(scope[SCOPE_KEY])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    token = await provider.token(scope="mcp:tools commerce:write")
    async with protected(provider, app=app) as url:
        assert (await post(url, token)).status_code == 204
    [access] = seen
    assert access.subject == access.client_id == "mcp-service"
    assert access.scopes == {"mcp:tools", "commerce:write"} and access.audience == (RESOURCE,)
    assert access.claims["iss"] == provider.issuer and access.expires_at is not None


async def test_an_expired_provider_token_gets_401_invalid_token(provider: AuthServer) -> None:
    token = await provider.token(client="short-lived")  # the provider gives this client 1 s tokens
    await anyio.sleep(2.2)
    async with protected(provider, leeway=0) as url:
        answer = await post(url, token)
    assert answer.status_code == 401
    assert bearer(answer) == invalid("the token has expired")
    assert answer.json() == {"error": "invalid_token", "error_description": "the token has expired"}


async def test_clock_skew_is_allowed_up_to_the_leeway_and_no_further(provider: AuthServer) -> None:
    now = provider.claims()["iat"]
    within = provider.sign(provider.claims(exp=now - 30))
    beyond = provider.sign(provider.claims(exp=now - 90))
    early = provider.sign(provider.claims(nbf=now + 90))
    async with protected(provider) as url:  # the default leeway, 60 s
        assert (await post(url, within)).status_code == 200
        assert bearer(await post(url, beyond)) == invalid("the token has expired")
        assert bearer(await post(url, early)) == invalid("the token is not valid yet")
    with pytest.raises(ValueError, match="leeway"):
        JWTVerifier(issuer=provider.issuer, audience=RESOURCE, leeway=301)


async def test_a_provider_token_for_another_resource_is_refused(provider: AuthServer) -> None:
    token = await provider.token(scope="other:read", resource="http://other.example/api")
    async with protected(provider, required=()) as url:
        answer = await post(url, token)
    assert answer.status_code == 401
    expected = f'Bearer resource_metadata="{METADATA}", error="invalid_token", error_description='
    assert bearer(answer) == expected + '"the token was issued for another resource"'


async def test_a_token_naming_another_issuer_is_refused_though_signed_with_the_providers_key(
    provider: AuthServer,
) -> None:
    token = provider.sign(provider.claims(iss="http://evil.example"))
    async with protected(provider) as url:
        answer = await post(url, token)
    assert answer.status_code == 401
    assert bearer(answer) == invalid("the token was refused: Invalid issuer")


@pytest.mark.parametrize("kid", ["provider-1", "attacker-1"])
async def test_a_token_signed_by_a_key_the_provider_does_not_publish_is_refused(
    provider: AuthServer, kid: str
) -> None:
    attacker, _ = rsa_jwk(kid)
    token = provider.sign(provider.claims(), key=attacker, kid=kid)
    async with protected(provider) as url:
        answer = await post(url, token)
    assert answer.status_code == 401
    description = (
        "the token was refused: Signature verification failed"
        if kid == provider.kid
        else "the token is signed with a key the authorization server does not publish"
    )
    assert bearer(answer) == invalid(description)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
    """A JWT built by hand: `alg: none` (no signature) or HS256 under `secret`."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    signature = b"" if secret is None else hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


async def test_an_unsigned_alg_none_token_is_refused(provider: AuthServer) -> None:
    token = unsigned({"alg": "none", "typ": "at+jwt", "kid": provider.kid}, provider.claims(), None)
    assert token.endswith(".")  # the JWS compact form with an empty signature
    async with protected(provider) as url:
        answer = await post(url, token)
    assert answer.status_code == 401
    assert bearer(answer) == invalid("the signature algorithm 'none' is not accepted")


async def test_hs256_signed_with_the_providers_public_key_as_secret_is_refused(provider: AuthServer) -> None:
    public_pem = provider.key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    header = {"alg": "HS256", "typ": "at+jwt", "kid": provider.kid}
    token = unsigned(header, provider.claims(), public_pem)
    async with protected(provider) as url:
        answer = await post(url, token)
    assert answer.status_code == 401
    assert bearer(answer) == invalid("the signature algorithm 'HS256' is not accepted")
    for algorithms in (["HS256"], ["none"], ["RS256", "HS512"]):
        with pytest.raises(ValueError, match="asymmetric"):
            JWTVerifier(issuer=provider.issuer, audience=RESOURCE, algorithms=algorithms)


async def test_a_token_in_the_query_string_is_refused_with_400_even_beside_the_header(
    provider: AuthServer,
) -> None:
    token = await provider.token()
    async with protected(provider) as url:
        alone = await post(f"{url}?access_token={token}")
        beside = await post(f"{url}?access_token={token}", token)
    expected = (
        f'Bearer resource_metadata="{METADATA}", error="invalid_request", '
        'error_description="access tokens are not accepted in the query string"'
    )
    for answer in (alone, beside):
        assert answer.status_code == 400
        assert bearer(answer) == expected


async def test_a_token_without_a_required_scope_gets_403_insufficient_scope(provider: AuthServer) -> None:
    token = await provider.token(scope="mcp:tools")
    async with protected(provider, required=("commerce:write",)) as url:
        answer = await post(url, token)
    assert answer.status_code == 403
    assert bearer(answer) == (
        f'Bearer resource_metadata="{METADATA}", scope="commerce:write mcp:tools", '
        'error="insufficient_scope", error_description="the token lacks commerce:write"'
    )
    enough = await provider.token(scope="mcp:tools commerce:write")
    async with protected(provider, required=("commerce:write",)) as url:
        assert (await post(url, enough)).status_code == 200


async def test_malformed_duplicated_or_oversized_credentials_are_refused(provider: AuthServer) -> None:
    async with protected(provider) as url, httpx.AsyncClient() as http:
        malformed = await post(url, "not a token")
        doubled = await http.post(
            url,
            json=INITIALIZE,
            headers=[*HEADERS.items(), ("authorization", "Bearer a"), ("authorization", "Bearer b")],
        )
        oversized = await post(url, "a" * 8193)
        basic = await post(url, authorization="Basic dXNlcjpwYXNz")
    assert malformed.status_code == doubled.status_code == 400
    assert malformed.json()["error"] == doubled.json()["error"] == "invalid_request"
    assert oversized.status_code == 401 and oversized.json()["error"] == "invalid_token"
    assert basic.status_code == 401 and "error=" not in bearer(basic)


async def test_the_token_type_is_checked_when_asked(provider: AuthServer) -> None:
    from_provider = await provider.token()
    plain_jwt = provider.sign(provider.claims(), typ="JWT")
    async with protected(provider, token_type="at+jwt") as url:
        assert (await post(url, from_provider)).status_code == 200
        answer = await post(url, plain_jwt)
    assert bearer(answer) == invalid("the token type 'JWT' is not 'at+jwt'")


async def test_unreachable_keys_give_503_not_401(provider: AuthServer, tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{peers.free_port()}/jwks"
    token = await provider.token()
    async with protected(provider, jwks_uri=closed) as url:
        answer = await post(url, token)
    assert answer.status_code == 503 and answer.headers["retry-after"] == "5"
    assert answer.json()["error"] == "temporarily_unavailable"
