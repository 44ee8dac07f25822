"""A cluster worker's start against a real Redis (issues 29 and 30): Redis refusing it is a configuration
error at start (the app's lifespan fails in one line, the password left out), every worker on one Redis
derives the same requestState key, a TLS Redis (`rediss://`) works, and the backplane's round trips and
errors are counted for /metrics."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest

import peers
from cluster.parts import free_port, redis_server
from cluster.raw_http import open_session
from cluster.tls_redis import tls_redis
from mcpkit import Server
from mcpkit.cluster import RedisBackplane, StoreRefused
from mcpkit.runtime.metrics import PrometheusMetrics
from mcpkit.transports.http_server import Operations, StreamableHTTPApp

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"


def assembled(backplane: RedisBackplane, **options: Any) -> StreamableHTTPApp:
    server = Server("startup", peers=backplane.peers(), tasks=backplane.tasks())

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return StreamableHTTPApp(server, backplane=backplane, **options)


async def lifespan_start(app: StreamableHTTPApp) -> dict[str, Any]:
    """What the app answers an ASGI server's lifespan startup with (startup.failed ends its lifespan)."""
    sent: list[dict[str, Any]] = []
    asked = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, Any]:
        return next(asked)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    await app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    return sent[0]


@pytest.mark.parametrize("password", ["", "wrong"])
async def test_a_wrong_redis_password_fails_the_apps_lifespan_at_start_in_one_line(
    tmp_path: Path, password: str
) -> None:
    with redis_server(tmp_path) as redis:
        redis.command("CONFIG", "SET", "requirepass", "right")
        url = f"redis://:{password}@127.0.0.1:{redis.port}/0"
        answer = await lifespan_start(assembled(RedisBackplane(url)))
        with pytest.raises(StoreRefused) as refused:
            RedisBackplane(url).check()
    assert answer["type"] == "lifespan.startup.failed"
    assert answer["message"].startswith(f"cannot reach Redis at redis://***@127.0.0.1:{redis.port}/0: ")
    assert "\n" not in answer["message"] and "wrong" not in answer["message"]
    assert str(refused.value).startswith("cannot reach Redis at redis://***@127.0.0.1")


async def test_an_unreachable_redis_fails_the_apps_lifespan_at_start() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    answer = await lifespan_start(assembled(RedisBackplane(url, socket_timeout=1)))
    assert answer["type"] == "lifespan.startup.failed"
    assert answer["message"].startswith(f"cannot reach Redis at {url}: ")


def test_every_backplane_on_one_redis_and_prefix_derives_the_same_state_key(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        first, second = RedisBackplane(redis.url).state_key(), RedisBackplane(redis.url).state_key()
        other_prefix = RedisBackplane(redis.url, prefix="other:").state_key()
        secret = redis.command("GET", "mcp:state-secret")
    with redis_server(tmp_path) as elsewhere:
        other_redis = RedisBackplane(elsewhere.url).state_key()
    assert first == second and len(first) == 32
    assert len({first, other_prefix, other_redis}) == 3
    assert secret not in (None, first)  # the key is derived from the secret, not the secret itself


def test_adopt_gives_a_random_keyed_server_the_shared_key_and_keeps_a_named_one(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        backplane = RedisBackplane(redis.url)
        loaded, named = Server("loaded"), Server("named", state_key=b"n" * 32)
        backplane.adopt(loaded)
        RedisBackplane(redis.url).adopt(named)
        assert loaded.state_sealer.key == backplane.state_key() and not loaded.state_sealer.random_key
        assert named.state_sealer.key == b"n" * 32


async def test_backplane_round_trips_and_errors_are_counted_for_metrics(tmp_path: Path) -> None:
    with redis_server(tmp_path) as redis:
        metrics = PrometheusMetrics()
        app = assembled(RedisBackplane(redis.url), operations=Operations(metrics=metrics, heartbeat=None))
        async with peers.serving(app) as url, httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url, VERSION)
            call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "add"}}
            call["params"] = {"name": "add", "arguments": {"a": 1, "b": 2}}
            assert (await http.post(url, json=call, headers=headers)).status_code == 200
            before = scraped(await http.get(url.removesuffix("/mcp") + "/metrics"))
            redis.stop()
            assert (await http.post(url, json={**call, "id": 6}, headers=headers)).status_code == 503
            after = scraped(await http.get(url.removesuffix("/mcp") + "/metrics"))
    assert before["mcp_server_backplane_round_trips_total"] >= 4  # the handshake's and the call's scripts
    assert not any(name.startswith("mcp_server_backplane_errors_total") for name in before)
    assert after['mcp_server_backplane_errors_total{error_type="ConnectionError"}'] >= 1


def scraped(response: httpx.Response) -> dict[str, float]:
    assert response.status_code == 200, response.text
    series = [line.rsplit(" ", 1) for line in response.text.splitlines() if not line.startswith("#")]
    return {name: float(value) for name, value in series}


async def test_a_tls_redis_url_serves_a_session_and_plain_redis_to_it_is_refused(tmp_path: Path) -> None:
    with tls_redis(tmp_path) as url:
        backplane = RedisBackplane(url)
        backplane.check()
        assert len(backplane.state_key()) == 32
        async with peers.serving(assembled(backplane)) as mcp, httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, mcp, VERSION)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add"}}
            call["params"] = {"name": "add", "arguments": {"a": 2, "b": 3}}
            answered = await http.post(mcp, json=call, headers=headers)
        plain = "redis://" + url.removeprefix("rediss://").split("?")[0]
        with pytest.raises(StoreRefused):
            RedisBackplane(plain, socket_timeout=1).check()
    assert answered.status_code == 200 and '"result":5' in answered.text.replace(" ", "")
