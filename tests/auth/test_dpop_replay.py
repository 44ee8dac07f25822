"""DPoP replay (RFC 9449 §11.1) at a protected server: a proof is accepted once by the whole deployment.

Tokens come from the real oidc-provider, bound to the test's keys; the workers are protect() guards, each
with its own checker and verifier, sharing nothing but a real redis-server (RedisBackplane.replay_store()).
A full replay store is a 503 with Retry-After, never a forgotten entry; entries go only by expiry.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from auth_server import RESOURCE, AuthServer, authorization_server
from cryptography.hazmat.primitives.asymmetric import ec
from redis.asyncio import Redis

from cluster.parts import redis_server
from mcpkit.auth import DPoPChecker, JWTVerifier, protect
from mcpkit.client.oauth.dpop import DPoP, access_token_hash
from mcpkit.cluster import RedisBackplane, RedisReplayStore
from mcpkit.protocol.dpop_proof import ReplayCheckUnavailable

pytestmark = pytest.mark.anyio

ORIGIN = RESOURCE.removesuffix("/mcp")


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with authorization_server(RESOURCE, tmp_path_factory.mktemp("oidc")) as server:
        yield server


class Holder:
    """A client's key and the token bound to it; `proof()` signs a proof for a POST to the resource."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.dpop = DPoP(private_key=self.key)
        self.token = ""

    async def get_token(self, provider: AuthServer) -> Holder:
        url = f"{provider.issuer}/token"
        form = {"grant_type": "client_credentials", "scope": "mcp:tools", "resource": RESOURCE}
        async with httpx.AsyncClient() as http:
            answer = await http.post(
                url,
                data=form,
                auth=("mcp-service", "mcp-service-secret"),
                headers={"DPoP": self.dpop.proof("POST", url)},
            )
        assert answer.status_code == 200 and answer.json()["token_type"] == "DPoP", answer.text
        self.token = str(answer.json()["access_token"])
        return self

    def proof(self, iat: float | None = None) -> str:
        claims = {
            "jti": f"j-{time.time_ns()}",
            "htm": "POST",
            "htu": RESOURCE,
            "iat": int(time.time() if iat is None else iat),
            "ath": access_token_hash(self.token),
        }
        headers = {"typ": "dpop+jwt", "jwk": self.dpop.public_jwk}
        return jwt.encode(claims, self.key, algorithm="ES256", headers=headers)


async def ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


@asynccontextmanager
async def worker(provider: AuthServer, checker: DPoPChecker) -> AsyncIterator[httpx.AsyncClient]:
    """A client of one protected worker: its own verifier and checker, driven in this process."""
    verifier = JWTVerifier(issuer=provider.issuer, audience=RESOURCE)
    app = protect(
        ok, verifier=verifier, resource=RESOURCE, authorization_servers=[provider.issuer], dpop=checker
    )
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=ORIGIN) as http:
            yield http
    finally:
        await verifier.aclose()


async def present(http: httpx.AsyncClient, holder: Holder, proof: str) -> httpx.Response:
    return await http.post("/mcp", headers={"authorization": f"DPoP {holder.token}", "dpop": proof})


def dpop_error(answer: httpx.Response) -> str:
    return answer.headers.get_list("www-authenticate")[-1]


async def test_a_proof_accepted_by_one_worker_is_refused_by_another(
    provider: AuthServer, tmp_path: Path
) -> None:
    holder = await Holder().get_token(provider)
    with redis_server(tmp_path) as redis:
        async with AsyncExitStack() as stack:
            planes = [RedisBackplane(redis.url, worker=f"w{i}") for i in (1, 2)]
            for plane in planes:
                stack.push_async_callback(plane.client().aclose)
            one, two = [
                await stack.enter_async_context(worker(provider, DPoPChecker(replays=p.replay_store())))
                for p in planes
            ]
            proof = holder.proof()
            first = await present(one, holder, proof)
            again_elsewhere = await present(two, holder, proof)
            again_here = await present(one, holder, proof)
            fresh_elsewhere = await present(two, holder, holder.proof())
    assert first.status_code == 200, first.text
    assert again_elsewhere.status_code == 401 and "used before" in dpop_error(again_elsewhere)
    assert 'error="invalid_dpop_proof"' in dpop_error(again_elsewhere)
    assert again_here.status_code == 401
    assert fresh_elsewhere.status_code == 200


async def test_one_holder_filling_the_cache_cannot_evict_anothers_entry_to_replay_it(
    provider: AuthServer,
) -> None:
    victim, attacker = await Holder().get_token(provider), await Holder().get_token(provider)
    async with worker(provider, DPoPChecker(max_replay_entries=3)) as http:
        seen = victim.proof()
        assert (await present(http, victim, seen)).status_code == 200
        flood = [await present(http, attacker, attacker.proof()) for _ in range(5)]
        replay = await present(http, victim, seen)
    assert [a.status_code for a in flood] == [200, 200, 503, 503, 503]
    assert replay.status_code == 401 and "used before" in dpop_error(replay)


async def test_a_full_cache_refuses_with_503_until_its_entries_expire(provider: AuthServer) -> None:
    holder = await Holder().get_token(provider)
    now = [time.time()]
    checker = DPoPChecker(max_replay_entries=2, max_age=60, leeway=5, clock=lambda: now[0])
    async with worker(provider, checker) as http:
        filled = [await present(http, holder, holder.proof(now[0])) for _ in range(2)]
        full = await present(http, holder, holder.proof(now[0]))
        now[0] += 65.5  # the first two proofs are past iat + max_age + leeway: their entries go
        after = await present(http, holder, holder.proof(now[0]))
    assert [a.status_code for a in filled] == [200, 200]
    assert full.status_code == 503, full.text
    expected = {"error": "temporarily_unavailable", "error_description": "the DPoP replay cache is full"}
    assert full.json() == expected
    assert 60 <= int(full.headers["retry-after"]) <= 66  # when the oldest entry goes
    assert after.status_code == 200, after.text


async def test_the_shared_store_forgets_only_expired_entries_and_refuses_when_full(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        a_client, b_client = Redis.from_url(redis.url), Redis.from_url(redis.url)
        try:
            a, b = RedisReplayStore(a_client, max_entries=2), RedisReplayStore(b_client, max_entries=2)
            assert await a.first_use("victim", "v", until=100, now=0)
            assert await b.first_use("attacker", "a0", until=20, now=0)
            with pytest.raises(ReplayCheckUnavailable) as full:
                await b.first_use("attacker", "a1", until=20, now=1)
            assert full.value.retry_after == 19  # when a0 goes
            assert not await b.first_use("victim", "v", until=100, now=2)
            assert not await a.first_use("attacker", "a0", until=20, now=20)  # still live at until itself
            assert await a.first_use("attacker", "a1", until=40, now=21)  # a0 expired: room again
            assert not await b.first_use("victim", "v", until=100, now=50)
            assert await a_client.zcard("mcp:dpop-jti") == 1  # a1 went at 40, the victim's stays
        finally:
            await a_client.aclose()
            await b_client.aclose()


async def test_the_shared_store_accepts_a_proof_raced_to_two_workers_once(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        clients = [Redis.from_url(redis.url) for _ in range(2)]
        stores = [RedisReplayStore(c) for c in clients]
        accepted: list[bool] = []

        async def attempt(store: RedisReplayStore) -> None:
            accepted.append(await store.first_use("k", "same", until=time.time() + 60, now=time.time()))

        try:
            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(attempt, stores[i % 2])
        finally:
            for client in clients:
                await client.aclose()
    assert sorted(accepted) == [False] * 19 + [True]


async def test_the_shared_store_leaves_nothing_in_redis_once_its_proofs_expire(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        client = Redis.from_url(redis.url)
        try:
            store = RedisReplayStore(client)
            now = time.time()
            assert await store.first_use("k", "j", until=now + 0.3, now=now)
            assert 0 < await client.pttl("mcp:dpop-jti") <= 302  # the window, rounded out to whole ms
            with anyio.fail_after(10):
                while await client.exists("mcp:dpop-jti"):
                    await anyio.sleep(0.05)
        finally:
            await client.aclose()


async def test_an_unreachable_shared_store_refuses_rather_than_accept_unchecked(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        client = Redis.from_url(redis.url, socket_timeout=2, socket_connect_timeout=2)
        try:
            store = RedisReplayStore(client)
            assert await store.first_use("k", "j", until=time.time() + 60, now=time.time())
            redis.stop()
            with pytest.raises(ReplayCheckUnavailable, match="unreachable"):
                await store.first_use("k", "other", until=time.time() + 60, now=time.time())
        finally:
            await client.aclose()
