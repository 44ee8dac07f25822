"""A worker's script calls of one event-loop turn, sent to Redis as one pipeline on one connection.

Each call on its own costs a pooled connection taken and given back, a write and a read system call
and a loop wake-up: about 70-100 µs of a worker's CPU, several times what Redis spends running the
script (benchmarks/README.md, "The CPU one call costs"). Under load many requests call in the same
turn; here the first call of a turn schedules one send for all of them at the end of the turn, and
each caller gets its own reply (or error) back, as if it had called alone. Nothing waits for a timer:
a call alone in its turn is sent in that turn. The commands are packed by hiredis straight from their
arguments (str, bytes, int, float), without redis-py's per-argument encoding.

Only for one Redis (or a Sentinel-managed one): a Redis Cluster's calls go to the node of their slot,
each on its own (`scripts_of`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from hiredis import pack_command
from redis.exceptions import NoScriptError, ResponseError

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster
    from redis.commands.core import AsyncScript

__all__ = ["Batch", "ScriptCall", "scripts_of"]

MAX_BATCH = 512  # commands in one send; more in a turn go in several

Arg = bytes | str | int | float
Call = tuple["AsyncScript", tuple[Any, ...], "asyncio.Future[Any]"]  # the script, its EVALSHA, the reply


class ScriptCall(Protocol):
    def __call__(self, keys: Sequence[str], args: Sequence[Arg]) -> Awaitable[Any]: ...


class Batch:
    """The calls of the turn under way, and their sending."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._queued: list[Call] = []
        self._sends: set[asyncio.Task[None]] = set()  # held so that the loop does not drop them

    def script(self, source: str) -> ScriptCall:
        """A script called like redis-py's registered scripts (`keys=`, `args=`), batched."""
        registered = self.redis.register_script(source)

        def call(keys: Sequence[str], args: Sequence[Arg]) -> Awaitable[Any]:
            command = ("EVALSHA", registered.sha, len(keys), *keys, *args)
            return self._queue(registered, command)

        return call

    def _queue(self, script: AsyncScript, command: tuple[Any, ...]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[Any] = loop.create_future()
        if not self._queued:
            loop.call_soon(self._send_turn)
        self._queued.append((script, command, reply))
        return reply

    def _send_turn(self) -> None:
        queued, self._queued = self._queued, []
        for start in range(0, len(queued), MAX_BATCH):
            self._hold(self._send(queued[start : start + MAX_BATCH]))

    async def _send(self, calls: list[Call]) -> None:
        pool = self.redis.connection_pool
        try:
            connection = await pool.get_connection()  # type: ignore[no-untyped-call]
        except BaseException as exc:  # the pool exhausted or Redis away: each caller hears it
            _fail_all(calls, exc)
            return
        try:
            await connection.send_packed_command(b"".join([pack_command(c) for _, c, _ in calls]))
            missing = await _read_replies(connection, calls)
        except BaseException as exc:
            await connection.disconnect(nowait=True)  # replies may be left on it: never reused
            _fail_all(calls, exc)
            return
        finally:
            await pool.release(connection)
        if missing:
            self._hold(self._load_and_retry(missing))

    async def _load_and_retry(self, missing: list[Call]) -> None:
        """Load each script Redis lacks (once), and send its calls again in the next turn."""
        try:
            for script in {id(script): script for script, _, _ in missing}.values():
                await self.redis.script_load(script.script)
        except BaseException as exc:
            _fail_all(missing, exc)
            return
        for script, command, reply in missing:
            self._queue(script, command).add_done_callback(partial(_pass_on, reply))

    def _hold(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)


async def _read_replies(connection: Any, calls: list[Call]) -> list[Call]:
    """Each caller's reply; the calls whose script this Redis does not have (a restarted or promoted
    server), to be sent again once it is loaded."""
    missing = []
    for call in calls:
        reply = call[2]
        try:
            result = await connection.read_response()
        except NoScriptError:
            missing.append(call)
            continue
        except ResponseError as exc:  # the script's own error: that caller's, the others go on
            _fail(reply, exc)
            continue
        if not reply.done():
            reply.set_result(result)
    return missing


def _pass_on(reply: asyncio.Future[Any], again: asyncio.Future[Any]) -> None:
    if again.cancelled():
        reply.cancel()
    elif again.exception() is not None:
        _fail(reply, again.exception())  # type: ignore[arg-type]
    elif not reply.done():
        reply.set_result(again.result())


def _fail_all(calls: list[Call], exc: BaseException) -> None:
    for _, _, reply in calls:
        _fail(reply, exc)


def _fail(reply: asyncio.Future[Any], exc: BaseException) -> None:
    if reply.done():
        return
    if isinstance(exc, asyncio.CancelledError):  # the worker shutting down: so are its callers
        reply.cancel()
    else:
        reply.set_exception(exc)


def scripts_of(redis: Redis | RedisCluster) -> Callable[[str], ScriptCall]:
    """How `SharedState` registers its scripts: batched per turn on one Redis, each on its own on a
    Redis Cluster."""
    from redis.asyncio.cluster import RedisCluster

    if isinstance(redis, RedisCluster):
        return redis.register_script
    return Batch(redis).script
