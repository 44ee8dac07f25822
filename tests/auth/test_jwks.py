"""JWTVerifier's key handling against a JWKS endpoint the test controls: rotation, the re-fetch rate limit,
an unreachable key server, and the asymmetric algorithms it accepts."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx
import jwt
import pytest
from auth_server import rsa_jwk
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from jwt.algorithms import ECAlgorithm, OKPAlgorithm

from mcpkit.auth import InvalidToken, JWTVerifier, VerifierUnavailable

pytestmark = pytest.mark.anyio

ISSUER = "https://as.test"
AUDIENCE = "https://mcp.test/mcp"


class KeyServer:
    """An ASGI JWKS endpoint serving `keys` (public JWKs), counting requests; `down` answers 503."""

    def __init__(self, *keys: dict[str, Any]) -> None:
        self.keys = list(keys)
        self.requests = 0
        self.down = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.requests += 1
        status = 503 if self.down else 200
        body = json.dumps({"keys": self.keys}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})


class Clock:
    def __init__(self) -> None:
        self.shift = 0.0

    def __call__(self) -> float:
        return time.time() + self.shift


def public(jwk: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in jwk.items() if k not in ("d", "p", "q", "dp", "dq", "qi")}


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": "s", "exp": now + 300, "scope": "mcp:tools", **changes}


def verifier(server: KeyServer, **options: Any) -> JWTVerifier:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(server))
    return JWTVerifier(
        issuer=ISSUER, audience=AUDIENCE, jwks_uri=f"{ISSUER}/jwks", http_client=http, **options
    )


async def test_a_rotated_key_is_fetched_once_when_a_token_names_it() -> None:
    old_key, old = rsa_jwk("old")
    new_key, new = rsa_jwk("new")
    server = KeyServer(public(old))
    check = verifier(server, jwks_min_refetch_interval=0)
    await check.verify(jwt.encode(claims(), old_key, "RS256", headers={"kid": "old"}))
    server.keys = [public(new)]  # the authorization server rotated its key
    access = await check.verify(jwt.encode(claims(), new_key, "RS256", headers={"kid": "new"}))
    assert access.subject == "s" and server.requests == 2


async def test_unknown_key_ids_refetch_the_jwks_at_most_once_per_interval() -> None:
    key, jwk = rsa_jwk("k1")
    server = KeyServer(public(jwk))
    clock = Clock()
    check = verifier(server, clock=clock)  # jwks_min_refetch_interval defaults to 30 s
    await check.verify(jwt.encode(claims(), key, "RS256", headers={"kid": "k1"}))

    async def forged_kids() -> None:
        for n in range(50):
            forged = jwt.encode(claims(), key, "RS256", headers={"kid": f"forged-{n}"})
            with pytest.raises(InvalidToken, match="does not publish"):
                await check.verify(forged)

    await forged_kids()
    assert server.requests == 1  # the keys were fetched less than the interval ago
    clock.shift = 31
    await forged_kids()
    assert server.requests == 2  # one re-fetch for the first unknown kid, none for the other 49


async def test_concurrent_unknown_key_ids_share_one_refetch() -> None:
    key, jwk = rsa_jwk("k1")
    server = KeyServer(public(jwk))
    check = verifier(server, jwks_min_refetch_interval=0)
    await check.verify(jwt.encode(claims(), key, "RS256", headers={"kid": "k1"}))
    refused: list[str] = []

    async def forged(n: int) -> None:
        try:
            await check.verify(jwt.encode(claims(), key, "RS256", headers={"kid": f"forged-{n}"}))
        except InvalidToken as exc:
            refused.append(exc.description)

    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(forged, n)
    assert len(refused) == 20
    assert server.requests == 2  # tasks that waited on the lock reuse the one re-fetch


async def test_an_unreachable_key_server_is_not_asked_again_within_the_interval() -> None:
    key, jwk = rsa_jwk("k1")
    server = KeyServer(public(jwk))
    server.down = True
    check = verifier(server)
    token = jwt.encode(claims(), key, "RS256", headers={"kid": "k1"})
    for _ in range(5):
        with pytest.raises(VerifierUnavailable):
            await check.verify(token)
    assert server.requests == 1


async def test_a_failed_metadata_discovery_is_remembered_for_the_refetch_interval() -> None:
    """Issue 31 item 27: while the issuer's metadata cannot be found, requests do not each look again."""
    key, jwk = rsa_jwk("k1")
    server, clock = KeyServer(public(jwk)), Clock()
    server.down = True
    http = httpx.AsyncClient(transport=httpx.ASGITransport(server))
    check = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, http_client=http, clock=clock)
    token = jwt.encode(claims(), key, "RS256", headers={"kid": "k1"})
    failures: list[Exception] = []

    async def verify() -> None:
        try:
            await check.verify(token)
        except VerifierUnavailable as exc:
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(verify)
    looked = server.requests  # one discovery: each well-known URL once
    assert len(failures) == 20 and looked <= 2
    clock.shift = 31.0  # past jwks_min_refetch_interval: looked for again
    with pytest.raises(VerifierUnavailable):
        await check.verify(token)
    assert server.requests == 2 * looked


async def test_keys_already_fetched_are_kept_when_a_refresh_fails() -> None:
    key, jwk = rsa_jwk("k1")
    server = KeyServer(public(jwk))
    check = verifier(server, jwks_ttl=0, jwks_min_refetch_interval=0)
    token = jwt.encode(claims(), key, "RS256", headers={"kid": "k1"})
    await check.verify(token)
    server.down = True
    assert (await check.verify(token)).subject == "s"
    assert server.requests == 2


def ec_jwk(kid: str) -> tuple[Any, dict[str, Any]]:
    key = ec.generate_private_key(ec.SECP256R1())
    return key, {**json.loads(ECAlgorithm.to_jwk(key.public_key())), "kid": kid}


def ed_jwk(kid: str) -> tuple[Any, dict[str, Any]]:
    key = ed25519.Ed25519PrivateKey.generate()
    return key, {**json.loads(OKPAlgorithm.to_jwk(key.public_key())), "kid": kid}


def rsa_without_alg(kid: str) -> tuple[Any, dict[str, Any]]:
    key, jwk = rsa_jwk(kid)
    return key, {k: v for k, v in public(jwk).items() if k != "alg"}


@pytest.mark.parametrize(
    ("alg", "make"),
    [("ES256", ec_jwk), ("EdDSA", ed_jwk), ("PS256", rsa_without_alg), ("RS256", rsa_without_alg)],
)
async def test_each_default_algorithm_verifies_with_a_key_of_its_type(alg: str, make: Any) -> None:
    key, jwk = make("k")
    check = verifier(KeyServer(public(jwk)))
    assert (await check.verify(jwt.encode(claims(), key, alg, headers={"kid": "k"}))).subject == "s"


async def test_a_key_published_for_one_algorithm_does_not_verify_another() -> None:
    key, jwk = rsa_jwk("k")  # published with "alg": "RS256"
    check = verifier(KeyServer(public(jwk)))
    with pytest.raises(InvalidToken, match="does not publish"):
        await check.verify(jwt.encode(claims(), key, "PS256", headers={"kid": "k"}))


async def test_without_a_kid_only_a_single_matching_key_is_used() -> None:
    key, jwk = rsa_jwk("a")
    _, other = rsa_jwk("b")
    assert (await verifier(KeyServer(public(jwk))).verify(jwt.encode(claims(), key, "RS256"))).subject == "s"
    with pytest.raises(InvalidToken):
        await verifier(KeyServer(public(jwk), public(other))).verify(jwt.encode(claims(), key, "RS256"))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"exp": None}, 'missing the "exp" claim'),
        ({"aud": None}, 'missing the "aud" claim'),
        ({"iss": None}, 'missing the "iss" claim'),
        ({"aud": ["https://other.test/mcp"]}, "another resource"),
        ({"aud": 7}, "neither a string nor an array"),
        ({"scope": ["mcp:tools"]}, "scope claim is not a string"),
    ],
)
async def test_required_and_malformed_claims_are_refused(changes: dict[str, Any], reason: str) -> None:
    key, jwk = rsa_jwk("k")
    token_claims = {k: v for k, v in claims(**changes).items() if v is not None}
    with pytest.raises(InvalidToken, match=reason):
        await verifier(KeyServer(public(jwk))).verify(
            jwt.encode(token_claims, key, "RS256", headers={"kid": "k"})
        )


async def test_the_audience_matches_as_a_resource_uri() -> None:
    key, jwk = rsa_jwk("k")
    token = jwt.encode(
        claims(aud=["https://x.test", "HTTPS://MCP.test:443/mcp/"]), key, "RS256", headers={"kid": "k"}
    )
    assert (await verifier(KeyServer(public(jwk))).verify(token)).audience[1] == "HTTPS://MCP.test:443/mcp/"
