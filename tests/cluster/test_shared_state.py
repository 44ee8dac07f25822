"""SharedState, the Redis side of a cluster's sessions, against a real redis-server: each rule the HTTP
side relies on, one test each (the rules of InMemoryEventStore where they are the same)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError

from cluster.parts import redis_server
from cluster.redis_cluster import redis_cluster
from conftest import requirement
from mcpkit.cluster.budget import EventBudget
from mcpkit.cluster.state import DuplicateRequest, EventLogFull, SharedState
from mcpkit.runtime.stream import Restored
from mcpkit.transports.http_server.event_store import EventsExpired, UnknownEventId

pytestmark = pytest.mark.anyio
AGREED = Restored("2025-11-25", {"sampling": {}}, {"name": "c", "version": "1"})


@pytest.fixture(params=["redis", "redis-cluster"])
async def state(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[SharedState]:
    """On one redis-server, and on a Redis Cluster of three primaries through redis-py's RedisCluster."""
    limits: dict[str, Any] = {"idle_timeout": 30, "max_sessions": 3, "max_events": 5, "max_bytes": 400}
    with ExitStack() as stack:
        if request.param == "redis":
            client: Redis | RedisCluster = Redis.from_url(stack.enter_context(redis_server(tmp_path)).url)
        else:
            client = RedisCluster.from_url(stack.enter_context(redis_cluster(tmp_path)).url)
        yield SharedState(client, prefix="t:", **limits)
        await client.aclose()


async def opened(state: SharedState, session_id: str = "s1", principal: str | None = None) -> None:
    assert await state.create(session_id, principal)
    await state.agreed(session_id, AGREED)


async def test_a_session_is_served_only_once_agreed_and_only_to_its_principal(state: SharedState) -> None:
    assert await state.create("s1", "alice")
    assert await state.begin("s1", "alice") is None  # reserved, initialize not answered yet
    await state.agreed("s1", AGREED)
    assert await state.begin("s1", "alice") == AGREED
    assert await state.begin("s1", "mallory") is None
    assert await state.begin("s1", None) is None
    assert await state.begin("nope", "alice") is None


async def test_max_sessions_counts_every_session_until_it_ends(state: SharedState) -> None:
    for sid in ("a", "b", "c"):
        await opened(state, sid)
    assert not await state.create("d", None)
    await state.end("b")
    assert await state.create("d", None)


async def test_a_request_id_in_flight_is_refused_until_its_stream_is_finished(state: SharedState) -> None:
    await opened(state)
    await state.begin("s1", None, worker="w1", request_id=7, stream_id="p1_w1")
    assert await state.request_owner("s1", 7) == "w1"
    with pytest.raises(DuplicateRequest):
        await state.begin("s1", None, worker="w2", request_id=7, stream_id="p1_w2")
    assert await state.store("s1", "p1_w1", b"answer", final=True) > 0
    assert await state.request_owner("s1", 7) is None
    assert await state.store("s1", "p1_w1", b"again", final=True) == -1  # finished once
    await state.begin("s1", None, worker="w2", request_id=7, stream_id="p2_w2")


@requirement("http-resume-own-stream")
async def test_replay_gives_only_the_named_streams_later_events(state: SharedState) -> None:
    await opened(state)
    await state.begin("s1", None, worker="w", request_id=1, stream_id="p1_w")
    _, first = await state.record("s1", "p1_w", b"one")
    await state.store("s1", "get", b"elsewhere")
    await state.store("s1", "p1_w", b"two")
    assert first is not None
    replay = await state.replay_after("s1", first)
    assert replay.stream_id == "p1_w" and [data for _, data in replay.events] == [b"two"]
    with pytest.raises(UnknownEventId):
        await state.replay_after("s1", first.replace("p1_w", "get"))  # that id was sent on another stream
    with pytest.raises(UnknownEventId):
        await state.replay_after("s1", "p1_w.1-99")  # never issued
    with pytest.raises(UnknownEventId):
        await state.replay_after("s1", "p1_w-1")  # no epoch: not an id of ours
    with pytest.raises(UnknownEventId):
        await state.replay_after("s1", "garbage")


async def test_the_oldest_events_go_past_either_cap_and_a_replay_from_them_is_expired(
    state: SharedState,
) -> None:
    await opened(state)
    ids = [(await state.record("s1", "get", b"x" * 10))[1] or "" for _ in range(8)]  # 5 kept of 8
    with pytest.raises(EventsExpired):
        await state.replay_after("s1", ids[0])
    assert len((await state.replay_after("s1", ids[2])).events) == 5
    big = await state.store("s1", "get", b"y" * 370)  # past 400 bytes of data: the older ones make room
    found = await state.read("s1", 0)
    assert found is not None and found[1][-1].seq == big and len(found[1]) < 5


async def test_an_ended_session_stores_nothing_and_forgets_its_subscriptions(state: SharedState) -> None:
    await opened(state)
    assert await state.subscriptions.subscribe("s1", "mem://a", None)
    assert await state.subscriptions.subscribers("mem://a") == ["s1"]
    await state.end("s1")
    assert await state.subscriptions.subscribers("mem://a") == []
    assert await state.store("s1", "get", b"late") == 0
    assert await state.begin("s1", None) is None


async def test_an_idle_session_expires(tmp_path: Path) -> None:
    with redis_server(tmp_path) as process:
        redis = Redis.from_url(process.url)
        state = SharedState(redis, prefix="t:", idle_timeout=0.3, max_sessions=3, max_events=5)
        await opened(state)
        assert await state.begin("s1", None) is not None
        await anyio.sleep(0.6)
        assert await state.begin("s1", None) is None
        assert await redis.dbsize() <= 1  # the sessions index, trimmed at the next create
        await redis.aclose()


async def test_a_session_subscribes_to_at_most_its_limit_and_resubscribing_is_not_another(
    state: SharedState,
) -> None:
    await opened(state)
    assert await state.subscriptions.subscribe("s1", "mem://a", 2) and await state.subscriptions.subscribe(
        "s1", "mem://b", 2
    )
    assert not await state.subscriptions.subscribe("s1", "mem://c", 2)
    assert await state.subscriptions.subscribe("s1", "mem://a", 2)  # already there
    await state.subscriptions.unsubscribe("s1", "mem://a")
    assert await state.subscriptions.subscribe("s1", "mem://c", 2)
    assert sorted([await state.subscriptions.subscribers(u) for u in ("mem://a", "mem://b", "mem://c")]) == [
        [],
        ["s1"],
        ["s1"],
    ]


async def test_a_dead_session_leaves_the_subscription_index_and_a_live_one_stays(tmp_path: Path) -> None:
    with redis_server(tmp_path) as process:
        redis = Redis.from_url(process.url)
        state = SharedState(redis, prefix="t:", idle_timeout=0.4, max_sessions=3, max_events=5)
        await opened(state, "live")
        await opened(state, "dead")
        assert await state.subscriptions.subscribe(
            "live", "mem://a", None
        ) and await state.subscriptions.subscribe("dead", "mem://a", None)
        assert await state.subscriptions.subscribe("dead", "mem://b", None)
        with anyio.fail_after(10):  # "dead" idles out; "live" is used (a GET's touch, a POST's begin)
            while await state.subscriptions.subscribers("mem://a") != ["live"] or await redis.exists(
                "t:sub:mem://b"
            ):
                assert await state.touch("live") and await state.begin("live", None) is not None
                await anyio.sleep(0.05)
        for _ in range(30):  # many idle times later "live" is still listed
            assert await state.touch("live")
            await anyio.sleep(0.05)
        assert await state.subscriptions.subscribers("mem://a") == ["live"]
        assert await redis.zcard("t:sub:mem://a") == 1
        await redis.aclose()


async def test_a_list_changed_is_heard_once_by_each_session_created_before_it(state: SharedState) -> None:
    await opened(state, "old")
    for _ in range(3):
        await state.changed("notifications/tools/list_changed")
    await opened(state, "new")
    assert await state.catch_up("old") == 1 and await state.catch_up("old") == 0
    assert await state.catch_up("new") == 0
    found = await state.read("old", 0)
    assert found is not None
    assert [e.data for e in found[1]] == [b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}']
    assert await state.catch_up("gone") == 0


async def test_with_views_a_list_changed_is_heard_only_when_the_sessions_view_differs(
    state: SharedState,
) -> None:
    tools, prompts = "notifications/tools/list_changed", "notifications/prompts/list_changed"
    assert await state.create("s1", None, {tools: "t0", prompts: "p0"})
    await state.agreed("s1", AGREED)
    await state.changed(tools)
    await state.changed(prompts)
    assert await state.catch_up("s1", {tools: "t0", prompts: "p1"}) == 1  # prompts only: its view differs
    await state.changed(tools)
    assert await state.catch_up("s1", {tools: "t1", prompts: "p1"}) == 1  # now tools
    assert await state.catch_up("s1", {tools: "t2", prompts: "p2"}) == 0  # views alone tell nothing
    found = await state.read("s1", 0)
    assert found is not None
    assert [e.data for e in found[1]] == [
        f'{{"jsonrpc":"2.0","method":"{m}"}}'.encode() for m in (prompts, tools)
    ]


# ---- how long events stay, and the cluster's budget for them -----------------------------------


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[Redis]:
    with redis_server(tmp_path) as process:
        client = Redis.from_url(process.url)
        yield client
        await client.aclose()


def short_lived(redis: Redis, **options: Any) -> SharedState:
    limits: dict[str, Any] = {"max_events": 100, "ended_retention": 0.3, **options}
    return SharedState(redis, prefix="t:", idle_timeout=30, max_sessions=10, **limits)


async def answered(state: SharedState, session_id: str, stream_id: str, *data: bytes) -> list[str]:
    """A request on `stream_id` whose events are `data`, the last its response; their event ids."""
    await state.begin(session_id, None, worker="w", request_id=stream_id, stream_id=stream_id)
    ids = []
    for i, d in enumerate(data):
        ids.append((await state.record(session_id, stream_id, d, final=i == len(data) - 1))[1] or "")
    return ids


async def until_gone(redis: Redis, key: str) -> None:
    with anyio.fail_after(10):
        while await redis.exists(key):
            await anyio.sleep(0.05)


async def test_an_ended_streams_events_are_gone_after_the_retention_and_resuming_from_them_is_expired(
    redis: Redis,
) -> None:
    state = short_lived(redis)
    await opened(state)
    ids = await answered(state, "s1", "p1_w", b"", b"progress", b"result")
    assert [data for _, data in (await state.replay_after("s1", ids[0])).events] == [b"progress", b"result"]
    await until_gone(redis, state.key("s1", "d:p1_w"))
    with pytest.raises(EventsExpired):
        await state.replay_after("s1", ids[0])
    await until_gone(redis, state.key("s1", "e"))  # nothing open, nothing for a GET: the index goes too
    assert sorted(await redis.keys("t:{s1}*")) == [b"t:{s1}:s"]
    with pytest.raises(EventsExpired):
        await state.replay_after("s1", ids[1])
    assert (await state.replay_after("s1", ids[2])).events == ()  # nothing after the last one was lost
    later = await answered(state, "s1", "p2_w", b"", b"again")
    assert [data for _, data in (await state.replay_after("s1", later[0])).events] == [b"again"]


async def test_open_streams_and_events_for_the_next_get_outlive_the_retention(redis: Redis) -> None:
    state = short_lived(redis)
    await opened(state)
    await state.begin("s1", None, worker="w", request_id=1, stream_id="p1_w")
    _, running = await state.record("s1", "p1_w", b"")
    await state.store("s1", "p1_w", b"progress")
    waiting = await state.store("s1", "get", b"note")
    ended = await answered(state, "s1", "p2_w", b"", b"result")
    await until_gone(redis, state.key("s1", "d:p2_w"))
    with pytest.raises(EventsExpired):
        await state.replay_after("s1", ended[0])
    assert running is not None
    assert [d for _, d in (await state.replay_after("s1", running)).events] == [b"progress"]
    found = await state.read("s1", 0)
    assert found is not None and [e.data for e in found[1] if e.seq == waiting] == [b"note"]
    assert [e.dropped for e in found[1] if e.stream_id == "p2_w"] == [True, True]
    assert [e.final for e in found[1] if e.stream_id == "p2_w"] == [False, True]  # a tail still ends


async def test_an_ended_session_leaves_no_event_data(redis: Redis) -> None:
    state = short_lived(redis, ended_retention=60)
    await opened(state)
    await answered(state, "s1", "p1_w", b"", b"result")
    await state.begin("s1", None, worker="w", request_id=2, stream_id="p2_w")
    await state.store("s1", "p2_w", b"progress")
    await state.store("s1", "get", b"note")
    await state.end("s1")
    assert await redis.keys("t:*") == []


async def test_past_the_budget_ended_streams_go_first_then_new_work_is_refused_until_back_under(
    redis: Redis,
) -> None:
    state = short_lived(redis, ended_retention=60, max_total_bytes=1000, max_bytes=10_000)
    other = short_lived(redis, ended_retention=60, max_total_bytes=1000, max_bytes=10_000)  # another worker
    budget, elsewhere = EventBudget(state, "w1"), EventBudget(other, "w2")
    for sid in ("a", "b"):
        await opened(state, sid)
    ended = await answered(state, "a", "p1_w", b"", b"r" * 800)
    await state.begin("b", None, worker="w", request_id=1, stream_id="p2_w")
    await state.store("b", "p2_w", b"p" * 600)
    await budget.check()
    assert budget.total == 600 and not state.full  # the ended stream's data went, the open one's stayed
    with pytest.raises(EventsExpired):
        await state.replay_after("a", ended[0])

    await budget.check()
    await elsewhere.check()  # it stored nothing, the cluster is not over: no Redis command at all
    assert not state.full and not other.full
    await other.store("b", "p2_w", b"p" * 600)  # an admitted request goes on storing, on another worker
    await elsewhere.check()
    assert elsewhere.total == 1200 and other.full and not state.full
    await state.store("b", "p2_w", b"+")  # no bus here: a worker learns it at its next step that stored
    await budget.check()
    assert state.full
    with pytest.raises(EventLogFull):
        await other.begin("a", None, worker="w", request_id=2, stream_id="p3_w")
    with pytest.raises(EventLogFull):
        await other.create("c", None)
    assert await other.begin("a", None) == AGREED  # an answer or a notification is still taken
    assert await state.store("b", "p2_w", b"response", final=True) > 0  # its response is never refused

    await budget.check()
    await elsewhere.check()
    assert not state.full and not other.full and budget.total == elsewhere.total == 0
    assert await other.begin("a", None, worker="w", request_id=2, stream_id="p3_w") == AGREED


async def test_a_heartbeat_the_store_lost_counts_as_current_until_its_worker_could_write_it_again(
    tmp_path: Path,
) -> None:
    with redis_server(tmp_path) as redis:
        client = Redis.from_url(redis.url)
        state = SharedState(
            client, prefix="h:", idle_timeout=30, max_sessions=3, max_events=5, heartbeat_ttl=1.0
        )
        await state.watch.run_once()  # who answers now
        await client.set(state.alive_key("w1"), b"1", px=60_000)
        assert await state.beating("w1")
        assert not await state.beating("w2")  # never beat: dead
        redis.stop()
        redis.start()  # nothing kept: w1's heartbeat is gone with every other key, another server answers
        with contextlib.suppress(RedisConnectionError):
            await client.ping()  # the connection the restart broke is dropped here
        assert await state.beating("w1")  # lost by the store, not by w1
        await anyio.sleep(1.2)
        assert not await state.beating("w1")  # a live w1 would have written it again by now
        await client.aclose()
