"""Messages between the workers of a cluster, over Redis sharded pub/sub (SSUBSCRIBE, Redis 7; on a Redis
Cluster each channel lives on the shard of its slot, so a session's wake-ups stay on its shard): wake-ups
when a session stores an event, each worker's inbox (messages routed to the worker serving a request) and
the bus (change notifications and session ends for every worker). Pub/sub is at most once, so a waiter is
woken once more when its channel's subscription is confirmed (what was published before that is read then),
and polls only while its channel has no confirmed subscription (the connection was lost, or not yet back).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
import orjson
from redis.asyncio.cluster import RedisCluster

from ..protocol.jsonrpc import JSON

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["Signals", "Wake"]

log = logging.getLogger("mcpkit.cluster")

Handler = Callable[[JSON], Awaitable[None]]


class Wake:
    """A wake-up that can be waited on again: whatever is set while the waiter works is not lost."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self, timeout: float | None) -> bool:
        """Until set (True) or `timeout` (False; None: no limit); then ready to be set again."""
        with anyio.move_on_after(timeout):
            await self._event.wait()
        woken, self._event = self._event.is_set(), anyio.Event()
        return woken


class Signals:
    """One pub/sub connection per worker: its inbox, the bus, and the session channels it waits on."""

    def __init__(
        self, redis: Redis | RedisCluster, *, inbox: str, bus: str, on_inbox: Handler, on_bus: Handler
    ) -> None:
        self.redis = redis
        self.inbox, self.bus = inbox, bus
        self._on_inbox, self._on_bus = on_inbox, on_bus
        self._waiting: dict[str, set[Wake]] = {}
        self._confirmed: set[str] = set()  # channels Redis confirmed on the live connection
        self._pubsub: PubSub | None = None
        self._down = False  # the pub/sub connection is lost (since its last warning)

    async def run(self) -> None:
        """Read until cancelled; reconnects (and re-subscribes) after Redis goes away."""
        while True:
            try:
                await self._read()
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:  # redis.ConnectionError and kin: retried
                if not self._down:  # once per outage
                    log.warning("cluster signals lost Redis (%s); retrying", exc)
                self._down = True
                self._wake_all()  # waiters poll instead
                await anyio.sleep(0.5)

    async def _read(self) -> None:
        pubsub = self.redis.pubsub()
        # a cluster's pub/sub reads one connection per shard in turn, each for a slice of the wait
        wait = 0.05 if isinstance(self.redis, RedisCluster) else 1.0
        self._pubsub = pubsub
        try:
            await pubsub.ssubscribe(self.inbox, self.bus, *self._waiting)
            if self._down:
                log.warning("cluster signals reached Redis again")
                self._down = False
            while True:
                message = await pubsub.get_sharded_message(timeout=wait)
                if message is None:
                    continue
                channel = _text(message["channel"])
                if message["type"] in ("smessage", b"smessage"):
                    await self._dispatch(channel, message["data"])
                elif message["type"] in ("ssubscribe", b"ssubscribe") and channel in self._waiting:
                    self._confirmed.add(channel)
                    self._wake(channel)  # to read what was published before the subscription took
                elif message["type"] in ("sunsubscribe", b"sunsubscribe"):
                    self._confirmed.discard(channel)
        finally:
            self._pubsub = None
            self._confirmed.clear()
            await pubsub.aclose()

    async def _dispatch(self, channel: str, data: bytes) -> None:
        if channel == self.inbox or channel == self.bus:
            handler = self._on_inbox if channel == self.inbox else self._on_bus
            try:
                await handler(orjson.loads(data))
            except Exception:
                log.exception("cluster message on %s failed", channel)
            return
        self._wake(channel)

    def _wake(self, channel: str) -> None:
        for event in self._waiting.get(channel, ()):
            event.set()

    def _wake_all(self) -> None:
        for channel in self._waiting:
            self._wake(channel)

    def confirmed(self, channel: str) -> bool:
        """A message published on `channel` now reaches its waiters (else they must poll)."""
        return channel in self._confirmed

    async def watch(self, channel: str, event: Wake) -> None:
        """Set `event` whenever something is published on `channel`, until `unwatch`."""
        waiting = self._waiting.setdefault(channel, set())
        waiting.add(event)
        if len(waiting) == 1 and self._pubsub is not None:
            try:
                await self._pubsub.ssubscribe(channel)
            except Exception:  # the reader re-subscribes everything when it reconnects
                log.debug("subscribing to %s failed; polling", channel)

    async def unwatch(self, channel: str, event: Wake) -> None:
        waiting = self._waiting.get(channel)
        if waiting is None:
            return
        waiting.discard(event)
        if not waiting:
            del self._waiting[channel]
            self._confirmed.discard(channel)
            if self._pubsub is not None:
                try:
                    await self._pubsub.sunsubscribe(channel)
                except Exception:
                    log.debug("unsubscribing from %s failed", channel)

    async def send(self, channel: str, message: JSON) -> None:
        await self.redis.spublish(channel, orjson.dumps(message))


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw
