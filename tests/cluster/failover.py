"""A primary/replica pair of real redis-servers and a TCP forwarder in front of them, for failover tests:
the workers reach Redis through the forwarder; the test stops the replica following (`cut`, as a replica
that lags behind), writes on, loses the primary, promotes the replica and points the forwarder at it, as
Sentinel or a cluster's failover would. Every connection open through the forwarder ends on a switch."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest
import redis

from cluster.parts import RedisProcess, find_binary, free_port

__all__ = ["Forwarder", "Pair", "Primary", "Replica", "primary_and_replica", "until_linked"]


class Primary(RedisProcess):
    """A redis-server that serves a replica's sync at once (not after the default 5 s wait for more)."""

    def argv(self) -> list[str]:
        return [*super().argv(), "--repl-diskless-sync-delay", "0"]


class Replica(Primary):
    primary = 0  # the port of the primary it follows

    def argv(self) -> list[str]:
        return [*super().argv(), "--replicaof", "127.0.0.1", str(self.primary)]


class Forwarder:
    """127.0.0.1:`port` forwarded to 127.0.0.1:`target`, until `switch`."""

    def __init__(self, target: int) -> None:
        self.target, self.port = target, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._open: set[anyio.CancelScope] = set()

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        task_status.started()
        await listener.serve(self._forward)

    def switch(self, target: int) -> None:
        """New connections go to `target`; the open ones end."""
        self.target = target
        for scope in list(self._open):
            scope.cancel()

    async def _forward(self, client: anyio.abc.SocketStream) -> None:
        with anyio.CancelScope() as scope:
            self._open.add(scope)
            try:
                upstream = await anyio.connect_tcp("127.0.0.1", self.target)
                async with client, upstream, anyio.create_task_group() as tg:
                    tg.start_soon(_pipe, client, upstream, tg.cancel_scope)
                    tg.start_soon(_pipe, upstream, client, tg.cancel_scope)
            except OSError:
                pass  # the target is down: the connection just ends
            finally:
                self._open.discard(scope)


async def _pipe(
    source: anyio.abc.SocketStream, sink: anyio.abc.SocketStream, both: anyio.CancelScope
) -> None:
    try:
        async for chunk in source:
            await sink.send(chunk)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    both.cancel()


class Pair:
    def __init__(self, primary: RedisProcess, replica: Replica) -> None:
        self.primary, self.replica = primary, replica

    def synced(self) -> None:
        """Every write so far is on the replica."""
        assert int(self.primary.command("WAIT", 1, 5000)) == 1

    def cut(self) -> None:
        """The replica stops following (promoted as it is): what the primary takes from now on is lost."""
        self.replica.command("REPLICAOF", "NO", "ONE")

    def follow(self) -> None:
        """The replica follows the primary again, and has caught up."""
        self.replica.command("REPLICAOF", "127.0.0.1", self.primary.port)
        until_linked(self.replica, self.primary)
        self.synced()


@contextmanager
def primary_and_replica(tmp_dir: Path | str) -> Iterator[Pair]:
    binary = find_binary("redis-server", "redis-server")
    with ExitStack() as stack:
        processes: list[RedisProcess] = []
        for kind in (Primary, Replica):
            directory = Path(tempfile.mkdtemp(prefix="redis-", dir=tmp_dir))
            stack.callback(shutil.rmtree, directory, True)
            process = kind(binary, directory, free_port(), appendonly=False)
            if isinstance(process, Replica):
                process.primary = processes[0].port
            process.start()
            stack.callback(process.stop)
            processes.append(process)
        primary, replica = processes
        assert isinstance(replica, Replica)
        until_linked(replica, primary)
        yield Pair(primary, replica)


def until_linked(replica: RedisProcess, primary: RedisProcess) -> None:
    """Until the replica follows the primary and acknowledges its writes: after a diskless sync the
    primary sends it nothing more until its first acknowledgement (up to a second later), and a WAIT
    before that does not count it."""
    deadline = time.monotonic() + 10
    while replica.command("INFO", "replication").get("master_link_status") != "up" or not _acked(primary):
        if time.monotonic() > deadline:
            pytest.fail("the replica did not reach its primary")
        time.sleep(0.05)


def _acked(primary: RedisProcess) -> bool:
    """A write to the primary reached its replica within 100 ms."""
    client = redis.Redis.from_url(primary.url, socket_timeout=5)
    try:
        with client.pipeline(transaction=False) as pipe:
            pipe.set("test:linked", b"1")
            pipe.wait(1, 100)
            return int(pipe.execute()[1]) >= 1
    finally:
        client.close()
