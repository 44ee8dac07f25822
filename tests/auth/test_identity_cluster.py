"""The login proxy's store in Redis (mcpkit.cluster.RedisIdentityStore), shared by two workers with the same
secret key: a code issued by one is redeemed at the other once however the two race, tokens one issues
the other accepts and revokes, and the provider's tokens are readable only with the workers' key."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis

from cluster.parts import redis_server
from mcpkit.auth.identity.records import Login
from mcpkit.auth.identity.sealing import Keys
from mcpkit.auth.identity.tokens import ProxyToken, TokenService
from mcpkit.auth.identity.upstream import UpstreamTokens
from mcpkit.cluster import RedisIdentityStore
from mcpkit.protocol.oauth_clients import ClientInfo
from mcpkit.protocol.oauth_server import OAuthError, pkce_challenge
from mcpkit.protocol.resource_auth import InvalidToken

pytestmark = pytest.mark.anyio

SECRET = os.urandom(32)
VERIFIER = "v" * 50
CLIENT = ClientInfo("client-1", ("http://127.0.0.1:9/cb",))
RESOURCE = "http://127.0.0.1:1/mcp"


def worker(redis: Redis, secret: bytes = SECRET) -> TokenService:
    return TokenService(RedisIdentityStore(redis), Keys(secret), issuer="http://127.0.0.1:1")


def login() -> Login:
    return Login(
        "client-1", "http://127.0.0.1:9/cb", "s", pkce_challenge(VERIFIER), "mcp", RESOURCE, "browser"
    )


def redemption(code: str) -> dict[str, str]:
    return {"code": code, "redirect_uri": "http://127.0.0.1:9/cb", "code_verifier": VERIFIER}


async def test_a_code_issued_by_one_worker_is_redeemed_once_across_both(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        clients = [Redis.from_url(server.url) for _ in range(2)]
        a, b = worker(clients[0]), worker(clients[1])
        try:
            code = await a.grant(
                login(), "alice", UpstreamTokens("upstream-secret", identity={"name": "Alice"})
            )
            answers: list[str] = []

            async def redeem(service: TokenService) -> None:
                try:
                    answers.append((await service.redeem_code(redemption(code), CLIENT))["access_token"])
                except OAuthError as exc:
                    answers.append(exc.error)

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(redeem, (a, b)[i % 2])
            tokens = [t for t in answers if t != "invalid_grant"]
            assert len(tokens) == 1 and answers.count("invalid_grant") == 9
            seen = await a.verify(tokens[0])
            assert isinstance(seen, ProxyToken) and seen.upstream is not None
            assert (seen.subject, seen.upstream.access_token, seen.audience) == (
                "alice",
                "upstream-secret",
                (RESOURCE,),
            )
            stored = [str(await clients[0].get(k)) for k in await clients[0].keys("*")]
            assert stored and not any("upstream-secret" in value for value in stored)
        finally:
            for client in clients:
                await client.aclose()


async def test_a_token_revoked_at_one_worker_is_refused_by_the_other(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        clients = [Redis.from_url(server.url) for _ in range(2)]
        a, b = worker(clients[0]), worker(clients[1])
        try:
            code = await a.grant(login(), "alice", UpstreamTokens("u"))
            tokens = await b.redeem_code(redemption(code), ClientInfo("client-1", ("http://127.0.0.1:9/cb",)))
            assert (await a.verify(tokens["access_token"])).subject == "alice"
            await b.revoke(tokens["refresh_token"], CLIENT)
            with pytest.raises(InvalidToken):
                await a.verify(tokens["access_token"])
        finally:
            for client in clients:
                await client.aclose()


async def test_a_worker_with_another_key_cannot_read_the_providers_tokens(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        client = Redis.from_url(server.url)
        try:
            code = await worker(client).grant(login(), "alice", UpstreamTokens("u"))
            tokens = await worker(client).redeem_code(redemption(code), CLIENT)
            stranger = await worker(client, os.urandom(32)).verify(tokens["access_token"])
            assert isinstance(stranger, ProxyToken) and stranger.upstream is None
        finally:
            await client.aclose()
