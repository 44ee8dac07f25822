"""IntrospectionVerifier (RFC 7662) against the real provider's introspection endpoint and opaque tokens."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from auth_server import MCP_PORT, METADATA, RESOURCE, AuthServer, authorization_server, mcp_app

import peers
from mcpkit.auth import IntrospectionVerifier, InvalidToken, VerifierUnavailable, protect

pytestmark = pytest.mark.anyio

CLIENT = "opaque-service"  # the provider issues this client opaque (introspectable) tokens


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


class Clock:
    """Wall time plus a shift the test moves forward."""

    def __init__(self) -> None:
        self.shift = 0.0

    def __call__(self) -> float:
        return time.time() + self.shift


def verifier(provider: AuthServer, **options: Any) -> IntrospectionVerifier:
    return IntrospectionVerifier(
        provider.introspection_endpoint,
        client_id="resource-server",
        client_secret=options.pop("client_secret", "resource-server-secret"),
        audience=RESOURCE,
        issuer=provider.issuer,
        **options,
    )


async def test_an_active_opaque_token_opens_the_protected_server(provider: AuthServer) -> None:
    token = await provider.token(client=CLIENT, scope="mcp:tools commerce:write")
    check = verifier(provider)
    app = protect(
        mcp_app(),
        verifier=check,
        resource=RESOURCE,
        authorization_servers=[provider.issuer],
        required_scopes=["mcp:tools"],
    )
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"accept": "application/json, text/event-stream"}
    async with peers.serving(app, port=MCP_PORT), httpx.AsyncClient() as http:
        refused = await http.post(RESOURCE, json=body, headers={**headers, "authorization": "Bearer nope"})
        answer = await http.post(RESOURCE, json=body, headers={**headers, "authorization": f"Bearer {token}"})
    await check.aclose()
    assert refused.status_code == 401
    assert refused.headers.get_list("www-authenticate")[0] == (
        f'Bearer resource_metadata="{METADATA}", scope="mcp:tools", error="invalid_token", '
        'error_description="the token is not active"'
    )
    assert answer.status_code == 200 and answer.headers["mcp-session-id"]


async def test_a_token_revoked_at_the_provider_is_refused(provider: AuthServer) -> None:
    token = await provider.token(client=CLIENT)
    check = verifier(provider, cache_ttl=0)
    access = await check.verify(token)
    assert access.client_id == CLIENT and access.scopes == {"mcp:tools"} and access.audience == (RESOURCE,)
    await provider.revoke(token, CLIENT)
    with pytest.raises(InvalidToken, match="not active"):
        await check.verify(token)
    await check.aclose()


async def test_a_cached_answer_is_reused_until_its_ttl_then_revocation_is_seen(provider: AuthServer) -> None:
    token = await provider.token(client=CLIENT)
    clock = Clock()
    check = verifier(provider, cache_ttl=30, clock=clock)
    await check.verify(token)
    await provider.revoke(token, CLIENT)
    await check.verify(token)  # within cache_ttl: the cached answer, no second request
    assert check.requests == 1
    clock.shift = 31
    with pytest.raises(InvalidToken, match="not active"):
        await check.verify(token)
    assert check.requests == 2
    await check.aclose()


async def test_the_cache_keeps_at_most_max_cache_entries_answers(provider: AuthServer) -> None:
    tokens = [await provider.token(client=CLIENT) for _ in range(6)]
    check = verifier(provider, max_cache_entries=3)
    for token in tokens:
        await check.verify(token)
        assert check.cached <= 3
    await check.verify(tokens[-1])  # still cached
    assert check.requests == 6
    await check.verify(tokens[0])  # evicted: asked again
    assert check.requests == 7 and check.cached == 3
    await check.aclose()


async def test_an_opaque_token_for_another_resource_is_refused(provider: AuthServer) -> None:
    token = await provider.token(client=CLIENT, scope="other:read", resource="http://other.example/api")
    check = verifier(provider)
    with pytest.raises(InvalidToken, match="another resource"):
        await check.verify(token)
    await check.aclose()


async def test_a_token_from_another_issuer_is_refused(provider: AuthServer) -> None:
    token = await provider.token(client=CLIENT)
    check = verifier(provider)
    check.issuer = "http://elsewhere.example"
    with pytest.raises(InvalidToken, match="another authorization server"):
        await check.verify(token)
    await check.aclose()


async def test_wrong_resource_server_credentials_make_the_verifier_unavailable_not_the_token_invalid(
    provider: AuthServer,
) -> None:
    token = await provider.token(client=CLIENT)
    check = verifier(provider, client_secret="wrong")
    with pytest.raises(VerifierUnavailable):
        await check.verify(token)
    await check.aclose()


async def test_cached_answers_never_outlive_the_tokens_expiry() -> None:
    now = time.time()
    answers = iter(
        [{"active": True, "aud": RESOURCE, "exp": now + 5, "scope": "mcp:tools"}, {"active": False}]
    )

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        body = httpx.Response(200, json=next(answers)).content
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})

    clock = Clock()
    http = httpx.AsyncClient(transport=httpx.ASGITransport(endpoint))
    check = IntrospectionVerifier(
        "http://as.test/introspect",
        client_id="rs",
        client_secret="s",
        audience=RESOURCE,
        cache_ttl=600,
        leeway=0,
        http_client=http,
        clock=clock,
    )
    await check.verify("opaque-1")
    clock.shift = 6  # past exp, well within cache_ttl
    with pytest.raises(InvalidToken, match="not active"):
        await check.verify("opaque-1")
    assert check.requests == 2
    await http.aclose()
