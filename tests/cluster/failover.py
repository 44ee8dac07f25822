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

from cluster.parts import RedisProcess, find_binary, free_port

__all__ = ["Forwarder", "Pair", "primary_and_replica"]


class Replica(RedisProcess):
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
        until_linked(self.replica)
        self.synced()


@contextmanager
def primary_and_replica(tmp_dir: Path | str) -> Iterator[Pair]:
    binary = find_binary("redis-server", "redis-server")
    with ExitStack() as stack:
        processes: list[RedisProcess] = []
        for kind in (RedisProcess, Replica):
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
        until_linked(replica)
        yield Pair(primary, replica)


def until_linked(replica: RedisProcess) -> None:
    deadline = time.monotonic() + 10
    while replica.command("INFO", "replication").get("master_link_status") != "up":
        if time.monotonic() > deadline:
            pytest.fail("the replica did not reach its primary")
        time.sleep(0.05)
