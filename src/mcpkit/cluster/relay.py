"""What the cluster's peers (`SharedPeers`, from `RedisBackplane.peers()`) hand over: resource
subscriptions live in Redis, resources/updated is stored on each subscribed session's standalone
stream; list_changed is counted in Redis (every session hears it on its GET stream, now or on its next
one), and it and logs go over the bus to every worker, which hands them to the streams it holds."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import orjson

from ..runtime._native import in_async_context
from ..transports.http_server.sessions import STANDALONE

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from anyio.lowlevel import EventLoopToken

    from .state import SharedState

__all__ = ["ClusterRelay"]

log = logging.getLogger("mcpkit.cluster")


class ClusterRelay:
    def __init__(self, state: SharedState) -> None:
        self.state = state
        self.task_group: TaskGroup | None = None  # where `changed` publishes from; set while serving
        self._token: EventLoopToken | None = None

    async def subscribe(self, session_id: str, uri: str, limit: int | None) -> bool:
        return await self.state.subscribe(session_id, uri, limit)

    async def unsubscribe(self, session_id: str, uri: str) -> None:
        await self.state.unsubscribe(session_id, uri)

    def changed(self, method: str) -> bool:
        """Publish a list_changed; callable from the event loop or from a sync tool's worker thread.
        False when it is not sent (the cluster is not running)."""
        group, token = self.task_group, self._token
        if group is None or token is None:
            log.warning("%s not sent: the cluster is not running", method)
            return False
        if in_async_context():
            group.start_soon(self._changed, method)
        else:  # a sync tool's worker thread: the loop starts it
            anyio.from_thread.run_sync(group.start_soon, self._changed, method, token=token)
        return True

    async def _changed(self, method: str) -> None:
        """Counted in Redis first: a session with no GET open hears it on its next one."""
        try:
            await self.state.changed(method)
        except Exception as exc:
            log.warning("cluster: %s not recorded (%s)", method, exc)
        await self._publish({"k": "changed", "m": method})

    async def resource_updated(self, uri: str) -> None:
        state = self.state
        note = orjson.dumps(
            {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
        )
        for session_id in await state.subscribers(uri):
            if await state.store(session_id, STANDALONE, note) == 0:
                await state.drop_subscriber(uri, session_id)  # that session has ended
        await self._publish({"k": "updated", "uri": uri})

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        await self._publish({"k": "log", "level": level, "data": data, "logger": logger})

    async def _publish(self, message: dict[str, Any]) -> None:
        try:
            await self.state.redis.spublish(self.state.bus, orjson.dumps(message))
        except Exception as exc:
            log.warning("cluster bus: %s not published (%s)", message.get("k"), exc)

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            self.task_group, self._token = tg, anyio.lowlevel.current_token()
            try:
                await anyio.sleep_forever()
            finally:
                self.task_group, self._token = None, None
