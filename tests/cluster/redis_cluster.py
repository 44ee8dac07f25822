"""A real local Redis Cluster for tests: `primaries` redis-server processes started with
`--cluster-enabled yes` on free ports in a temporary directory, joined by `redis-cli --cluster create`,
stopped and removed when the block ends. Tests reach it through redis-py's `RedisCluster` (any one
node's address; the others are discovered)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster

from cluster.parts import RedisProcess, find_binary, free_port

__all__ = ["LocalCluster", "redis_cluster"]


class ClusterNode(RedisProcess):
    bus_port = 0  # the cluster bus (by default the port + 10000, which may be taken or past 65535)

    def argv(self) -> list[str]:
        node_file = str(self.directory / "nodes.conf")
        cluster = ["--cluster-enabled", "yes", "--cluster-config-file", node_file]
        return [*super().argv(), *cluster, "--cluster-port", str(self.bus_port)]


class LocalCluster:
    def __init__(self, nodes: list[ClusterNode]) -> None:
        self.nodes = nodes
        self.url = nodes[0].url.removesuffix("/0")  # a cluster has only db 0

    def client(self) -> RedisCluster:
        """A synchronous client of the whole cluster (for a test's own checks)."""
        return RedisCluster.from_url(self.url, socket_timeout=5)

    def owner(self, key: str) -> ClusterNode:
        """The node serving `key`'s slot now."""
        client = self.client()
        try:
            node = client.get_node_from_key(key)  # type: ignore[no-untyped-call]
            assert node is not None
            return next(n for n in self.nodes if n.port == node.port)
        finally:
            client.close()

    def take_over(self, primary: ClusterNode) -> ClusterNode:
        """`primary` is lost; its replica takes its slots over (CLUSTER FAILOVER TAKEOVER, as the cluster
        would once the others agree it failed); the replica, once the cluster is ok again."""
        lines = _text(self.nodes[0].command("CLUSTER", "NODES")).splitlines()
        ids = {int(line.split()[1].split(":")[1].split("@")[0]): line.split()[0] for line in lines}
        follows = {line.split()[3]: int(line.split()[1].split(":")[1].split("@")[0]) for line in lines}
        replica = next(n for n in self.nodes if n.port == follows[ids[primary.port]])
        primary.stop()
        replica.command("CLUSTER", "FAILOVER", "TAKEOVER")
        _until_ok([n for n in self.nodes if n is not primary])
        return replica


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _create(cli: str, nodes: list[ClusterNode], replicas: int) -> None:
    addresses = [f"127.0.0.1:{node.port}" for node in nodes]
    done = subprocess.run(
        [cli, "--cluster", "create", *addresses, "--cluster-replicas", str(replicas), "--cluster-yes"],
        capture_output=True,
        timeout=60,
    )
    if done.returncode != 0:
        pytest.fail(f"redis-cli --cluster create failed:\n{done.stdout.decode()}{done.stderr.decode()}")


def _until_ok(nodes: list[ClusterNode], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            states = [node.command("CLUSTER", "INFO") for node in nodes]
        except redis.RedisError:
            states = []
        texts = [_text(s) for s in states]
        if texts and all("cluster_state:ok" in s for s in texts):
            return
        if time.monotonic() > deadline:
            log = nodes[0].log.read_text(errors="replace")[-3000:]
            pytest.fail("the Redis Cluster did not reach cluster_state:ok:\n" + log)
        time.sleep(0.1)


def _until_synced(nodes: list[ClusterNode], replicas: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        infos = [node.command("INFO", "replication") for node in nodes]
        if sum(1 for i in infos if i.get("master_link_status") == "up") == replicas:
            return
        if time.monotonic() > deadline:
            pytest.fail("the Redis Cluster's replicas did not reach their primaries")
        time.sleep(0.1)


@contextmanager
def redis_cluster(tmp_dir: Path | str, primaries: int = 3, replicas: int = 0) -> Iterator[LocalCluster]:
    """A Redis Cluster of `primaries` primaries, each with `replicas` replicas, for the block."""
    binary = find_binary("redis-server", "redis-server")
    cli = find_binary("redis-cli", "redis-tools")
    with ExitStack() as stack:
        nodes = []
        for _ in range(primaries * (1 + replicas)):
            directory = Path(tempfile.mkdtemp(prefix="redis-cluster-", dir=tmp_dir))
            stack.callback(shutil.rmtree, directory, True)
            node = ClusterNode(binary, directory, free_port(), appendonly=False)
            node.bus_port = free_port()
            node.start()
            stack.callback(node.stop)
            nodes.append(node)
        _create(cli, nodes, replicas)
        _until_ok(nodes)
        if replicas:
            _until_synced(nodes, primaries * replicas)
        yield LocalCluster(nodes)
