"""A primary, its replica and three real redis-sentinels (quorum 2) on free ports under a temporary
directory, with short timings (down after 500 ms, failover timeout 2 s), for the Sentinel failover test:
the workers reach Redis through a `redis+sentinel://` URL naming the three sentinels."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from cluster.failover import Primary, Replica, until_linked
from cluster.parts import RedisProcess, find_binary, free_port

__all__ = ["SERVICE", "Sentinels", "sentinel_group"]

SERVICE = "mymaster"
QUORUM = 2


class SentinelProcess(RedisProcess):
    """A redis-sentinel watching the primary on port `primary` (its config file is its own to rewrite)."""

    primary = 0
    replica = 0  # known from the start: else found by the primary's INFO, every 10 s

    def argv(self) -> list[str]:
        config = self.directory / "sentinel.conf"
        if not config.exists():
            lines = [
                f"port {self.port}",
                "bind 127.0.0.1",
                "daemonize no",
                f"dir {self.directory}",
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary} {QUORUM}",
                f"sentinel known-replica {SERVICE} 127.0.0.1 {self.replica}",
                f"sentinel down-after-milliseconds {SERVICE} 500",
                f"sentinel failover-timeout {SERVICE} 2000",
                f"sentinel parallel-syncs {SERVICE} 1",
            ]
            config.write_text("\n".join(lines) + "\n")
        return [self.binary, str(config)]


class Sentinels:
    def __init__(self, primary: RedisProcess, replica: RedisProcess, sentinels: list[SentinelProcess]):
        self.primary = primary
        self.replica = replica
        self.sentinels = sentinels
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in sentinels)
        self.url = f"redis+sentinel://{hosts}/{SERVICE}"

    def kill_primary(self) -> None:
        """SIGKILL: the primary is gone at once, with whatever its replica had not taken yet."""
        process = self.primary.process
        assert process is not None
        process.kill()
        process.wait()

    def primary_port(self) -> int:
        """The port of the primary the sentinels name now."""
        found: Any = self.sentinels[0].command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
        return int(found[1])

    def until_ready(self, timeout: float = 20.0) -> None:
        """Until every sentinel knows the replica and the other sentinels (found through the primary's
        hello channel, every 2 s): before that no failover can be agreed."""
        deadline = time.monotonic() + timeout
        while not all(self._ready(s) for s in self.sentinels):
            if time.monotonic() > deadline:
                pytest.fail("the sentinels did not find each other and the replica")
            time.sleep(0.1)

    def _ready(self, sentinel: SentinelProcess) -> bool:
        replicas = sentinel.command("SENTINEL", "REPLICAS", SERVICE)
        others = sentinel.command("SENTINEL", "SENTINELS", SERVICE)
        return len(replicas) == 1 and len(others) == len(self.sentinels) - 1


@contextmanager
def sentinel_group(tmp_dir: Path | str, sentinels: int = 3) -> Iterator[Sentinels]:
    server = find_binary("redis-server", "redis-server")
    sentinel = find_binary("redis-sentinel", "redis-sentinel")
    with ExitStack() as stack:

        def started(kind: type[RedisProcess], binary: str, follows: int, replica: int = 0) -> Any:
            directory = Path(tempfile.mkdtemp(prefix="redis-", dir=tmp_dir))
            stack.callback(shutil.rmtree, directory, True)
            process = kind(binary, directory, free_port(), appendonly=False)
            if isinstance(process, Replica | SentinelProcess):
                process.primary = follows
            if isinstance(process, SentinelProcess):
                process.replica = replica
            process.start()
            stack.callback(process.stop)
            return process

        primary = started(Primary, server, 0)
        replica = started(Replica, server, primary.port)
        until_linked(replica, primary)
        watching = [started(SentinelProcess, sentinel, primary.port, replica.port) for _ in range(sentinels)]
        group = Sentinels(primary, replica, watching)
        group.until_ready()
        yield group
