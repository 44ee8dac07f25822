"""Which sessions of the cluster subscribed to which resource URIs (resources/subscribe across workers).

A session lists its URIs in its own set (`u`, in its slot); each URI's subscribers are a sorted set of
their own (`sub:<uri>`, in the URI's slot), each session scored by when it is due to be forgotten, so a
session that ended without unsubscribing drops out by itself. The session's requests score its URIs
again once per half idle timeout (scripts.INDEX, from `SharedState.begin` and `touch`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import scripts

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

    from .batch import ScriptCall

__all__ = ["UriIndex"]

Arg = bytes | str | int | float


class UriIndex:
    def __init__(
        self,
        redis: Redis | RedisCluster,
        script: Callable[[str], ScriptCall],
        key: Callable[[str, str], str],
        prefix: str,
        idle_ms: int,
    ) -> None:
        self.redis = redis
        self.key = key  # a session's key (SharedState.key)
        self.prefix = prefix
        self.idle_ms = idle_ms
        self._index = script(scripts.INDEX)
        self._subscribe = script(scripts.SUBSCRIBE)
        self._subscribers = script(scripts.SUBSCRIBERS)

    def sub_key(self, uri: str) -> str:
        """The sessions subscribed to `uri` (scripts.INDEX): a key of its own slot."""
        return self.prefix + "sub:" + uri

    async def scored_again(self, session_id: str, now: int, uris: list[bytes]) -> None:
        """The session is alive at `now`: its `uris` (those due, see scripts.INDEX) keep it listed."""
        score = now + self.idle_ms * 3 // 2
        for uri in uris:
            await self._index(keys=[self.sub_key(_text(uri))], args=[session_id, score, now])

    async def subscribe(self, session_id: str, uri: str, limit: int | None) -> bool:
        """The session hears updates of `uri`; False when it already has `limit` other subscriptions."""
        keys = [self.key(session_id, "s"), self.key(session_id, "u")]
        now = _now_ms()
        args: list[Arg] = [now, self.idle_ms, uri, "" if limit is None else limit]
        since = int(await self._subscribe(keys=keys, args=args))
        if since > 0:  # the session's side first: a URI it lists is indexed again by its next requests
            score = since + self.idle_ms * 3 // 2
            await self._index(keys=[self.sub_key(uri)], args=[session_id, score, now])
        return since != 0

    async def unsubscribe(self, session_id: str, uri: str) -> None:
        await self.redis.srem(self.key(session_id, "u"), uri)
        await self.redis.zrem(self.sub_key(uri), session_id)

    async def subscribers(self, uri: str) -> list[str]:
        """The sessions subscribed to `uri` (one that ended may still be listed for half an idle time)."""
        found = await self._subscribers(keys=[self.sub_key(uri)], args=[_now_ms()])
        return [_text(sid) for sid in found]

    async def drop_subscriber(self, uri: str, session_id: str) -> None:
        await self.redis.zrem(self.sub_key(uri), session_id)


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def _now_ms() -> int:
    return int(time.time() * 1000)
