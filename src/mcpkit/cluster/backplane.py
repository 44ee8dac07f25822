"""RedisBackplane: what a StreamableHTTPApp takes to serve its sessions from every worker of a cluster.

    app = StreamableHTTPApp(server, backplane=RedisBackplane("redis://redis.internal:6379/0"))

On a Redis Cluster, `RedisBackplane("redis://any-node:7000", cluster=True)` (the other nodes are
discovered) or `RedisBackplane(redis=RedisCluster(...))`; behind Sentinel,
`RedisBackplane("redis+sentinel://sentinel-a:26379,sentinel-b:26379/mymaster")` (see `sentinel`).
Run the same app on as many workers and machines as you like, behind any load balancer, no sticky
sessions. What is shared, and how, is in `scripts` (the Redis layout) and `http` (the flows).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..runtime.metrics import Metrics
from ..server.peers import Peers
from ..server.request_state import StateSealer
from ..server.server import Server
from ..server.tasks.engine import TaskEngine
from ..transports.http_server.delivery import Answering
from ..transports.http_server.sessions import SessionStream
from .durability import Durability
from .fanout import Fanout
from .limits import RedisLimits
from .peers import SharedPeers
from .pool import Traffic, WaitingPool
from .relay import ClusterRelay
from .replay_store import RedisReplayStore
from .sentinel import is_sentinel_url, sentinel_pool
from .sessions import ClusterSessions
from .startup import StoreRefused, check_reachable, redacted, shared_state_key
from .state import SharedState
from .task_store import RedisTaskStore
from .tasks import ClusterTasks
from .warm import WarmReplicas

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.cluster import RedisCluster

__all__ = ["RedisBackplane"]


_WARM_IDLE = 60.0  # seconds a session stays warm on a worker without a request


def _positive(*limits: float) -> None:
    if min(limits) <= 0:
        raise ValueError("RedisBackplane limits and periods must be positive")


class RedisBackplane:
    """Sessions in Redis at `url` (or the given `redis` client: a `Redis` or a `RedisCluster`), keys
    under `prefix` (no `{` or `}` in it). `cluster`: `url` names a node of a Redis Cluster.

    `idle_timeout`: a session nobody used for this long is gone (its keys expire). `max_sessions`:
    across the cluster. `max_events` / `max_bytes`: events kept per session for resumption (the
    oldest go first; a resumption from a dropped event is 400, as in one process). `ended_retention`:
    how long the events of a stream that got its response stay for a resumption. `max_total_bytes`:
    the event data kept across the cluster; past it, ended streams' data goes first, then new
    sessions and requests get 503 until it is back under (see `budget`). `heartbeat` /
    `dead_after`: how often a worker says it is alive, and after how long without that a stream whose
    request it served is finished with an error. `max_in_flight`: requests of one session handled at
    once across the cluster (one more is answered -32010, as in one process). `max_connections`: this
    worker's Redis connections; a command waits up to `pool_timeout` seconds for one, then the request
    is refused as busy (-32010, HTTP 429 with Retry-After), not as an outage. `worker`: a name for this
    process (letters and digits; a random suffix keeps each start distinct). `max_tasks`,
    `max_live_tasks`, `task_bytes` and `task_result_bytes`: the bounds of the tasks kept in the same
    Redis (cluster/task_store.py). `wait_replicas` / `wait_timeout`: a session's agreement (the
    initialize response), a created task and a task's end are confirmed on this many replicas (Redis
    WAIT) before they are answered or reported, or refused as a store failure (an initialize: 503; a
    task: -32011, answered once a replica has it; see `durability`); 0, the default, answers once the
    primary has them, and a failover may lose them (the client then finds the session or the task
    gone, and a resumption across it is told which events were lost: docs/scale-out.md).
    `warm_sessions`: sessions this worker keeps running between their requests (the most recently
    served; one idle for a minute, or half the idle timeout, is closed), so their next request here
    is not restored from scratch (see `warm`); 0 restores every request.
    """

    # the parts made on first use: the shared state, what the bus reaches, the pool's round-trip counts
    _state: SharedState | None = None
    _fanout: Fanout | None = None
    _traffic: Traffic | None = None

    def __init__(
        self,
        url: str | None = None,
        *,
        redis: Redis | RedisCluster | None = None,
        cluster: bool = False,
        prefix: str = "mcp:",
        worker: str = "w",
        idle_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        max_events: int = 1000,
        max_bytes: int = 4 * 1024 * 1024,
        ended_retention: float = 30.0,
        max_total_bytes: int = 256 * 1024 * 1024,
        heartbeat: float = 2.0,
        dead_after: float = 6.0,
        socket_timeout: float = 2.0,
        max_in_flight: int = 100,
        max_connections: int = 100,
        pool_timeout: float = 1.0,
        max_tasks: int = 100_000,
        max_live_tasks: int = 10_000,
        task_bytes: int = 1024 * 1024 * 1024,
        task_result_bytes: int = 16 * 1024 * 1024,
        wait_replicas: int = 0,
        wait_timeout: float = 1.0,
        warm_sessions: int = 1000,
    ) -> None:
        limits = (idle_timeout, max_sessions, max_events, max_bytes, heartbeat, dead_after, max_in_flight)
        _positive(*limits, max_connections, pool_timeout, ended_retention, max_total_bytes)
        _check_store(url or redis, cluster, prefix, wait_replicas, wait_timeout, warm_sessions)
        self.url = url
        self._redis = redis
        self.prefix = prefix
        self.cluster = cluster
        self.wait_replicas, self.wait_timeout = wait_replicas, wait_timeout
        self.worker = re.sub(r"[^A-Za-z0-9]", "", worker) + secrets.token_hex(3)
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes
        self.ended_retention = ended_retention
        self.heartbeat = heartbeat
        self.dead_after = dead_after
        self.socket_timeout = socket_timeout
        self.max_in_flight = max_in_flight
        self.max_connections, self.pool_timeout = max_connections, pool_timeout
        self.task_bounds = _task_bounds(max_tasks, max_live_tasks, task_bytes, task_result_bytes)
        self.warm_sessions = warm_sessions

    def client(self) -> Redis | RedisCluster:
        if self._redis is None and self.cluster:
            self._redis = self._cluster_client()
        if self._redis is None:
            from redis.asyncio import Redis

            assert self.url is not None
            pool = (sentinel_pool if is_sentinel_url(self.url) else WaitingPool.from_url)(
                self.url,
                max_connections=self.max_connections,
                timeout=self.pool_timeout,
                socket_timeout=self.socket_timeout,
                socket_connect_timeout=self.socket_timeout,
                health_check_interval=30,
            )
            self._traffic = pool.traffic
            self._redis = Redis.from_pool(pool)
        return self._redis

    def measure(self, metrics: Metrics) -> None:
        """This worker's Redis round trips and failed ones (by `error.type`) as the counters
        `mcp.server.backplane.round_trips` and `mcp.server.backplane.errors` (with a client of your own,
        `redis=`, nothing is counted)."""
        self.client()
        traffic = self._traffic
        if traffic is not None:
            metrics.count("mcp.server.backplane.round_trips", lambda: {"": traffic.round_trips})
            metrics.count("mcp.server.backplane.errors", lambda: dict(traffic.errors), "error.type")

    def check(self) -> None:
        """Return once Redis answers; StoreRefused (its message one line, the password left out) for a
        wrong password or an unreachable Redis. Blocking: for a program's start."""
        check_reachable(self._url_for("check()"), self.socket_timeout, cluster=self.cluster)

    def state_key(self) -> bytes:
        """The requestState key every worker and machine on this Redis and prefix shares, derived from a
        secret kept there (cluster/startup.py). Blocking: call it while assembling, as
        `Server(state_key=backplane.state_key())`; StoreRefused when Redis cannot be used."""
        url = self._url_for("state_key()")
        return shared_state_key(url, self.prefix, self.socket_timeout, cluster=self.cluster)

    def _url_for(self, what: str) -> str:
        if self.url is None:
            raise ValueError(f"RedisBackplane.{what} needs the url, not only a client")
        return self.url

    async def started(self) -> None:
        """StoreRefused unless Redis answers now: the app's lifespan fails at start (a wrong password, an
        unreachable Redis) instead of a worker answering 503 to everything; outages after it are 503s."""
        try:
            await self.client().ping()
        except Exception as exc:  # any failure at start is the configuration's
            where = redacted(self.url) if self.url is not None else "the given client"
            raise StoreRefused(f"cannot reach Redis at {where}: {exc}") from None

    def _cluster_client(self) -> RedisCluster:
        from redis.asyncio.cluster import RedisCluster

        assert self.url is not None
        return RedisCluster.from_url(
            self.url,
            max_connections=self.max_connections,
            socket_timeout=self.socket_timeout,
            socket_connect_timeout=self.socket_timeout,
        )

    def durability(self) -> Durability:
        return Durability(self.client(), self.wait_replicas, self.wait_timeout)

    async def ready(self) -> str | None:
        """None when Redis answers a PING, else why not (the readiness probe's reason)."""
        try:
            await self.client().ping()
        except Exception as exc:  # any failure means: send no new work here
            return f"redis unavailable: {type(exc).__name__}"
        return None

    def replay_store(self, max_entries: int = 100_000) -> RedisReplayStore:
        """DPoP replay checks in the same Redis, for every worker's `DPoPChecker(replays=...)`."""
        return RedisReplayStore(self.client(), self.prefix, max_entries)

    def limits(self, lease: float = 600.0) -> RedisLimits:
        """Counts for `RateLimit(store=...)` and `ConcurrencyLimit(store=...)` in the same Redis, so each
        limit holds across every worker (`lease`: how long a slot counts at most, see RedisLimits)."""
        return RedisLimits(self.client(), self.prefix, lease)

    def state(self) -> SharedState:
        """What every worker shares about its sessions (one per backplane)."""
        if self._state is None:
            self._state = SharedState(
                self.client(),
                prefix=self.prefix,
                idle_timeout=self.idle_timeout,
                max_sessions=self.max_sessions,
                max_events=self.max_events,
                max_bytes=self.max_bytes,
                max_in_flight=self.max_in_flight,
                ended_retention=self.ended_retention,
                max_total_bytes=self.max_total_bytes,
                durability=self.durability(),
                heartbeat_ttl=self.dead_after,
            )
        return self._state

    def peers(self, *, max_subscriptions: int | None = 100, max_uri_length: int | None = 2048) -> Peers:
        """The Server's `peers=`: subscriptions in Redis, changes and logs to every worker's sessions."""
        fanout = self._handed()
        if fanout.peers is None:
            limits = {"max_subscriptions": max_subscriptions, "max_uri_length": max_uri_length}
            fanout.peers = SharedPeers(fanout.relay, **limits)
        return fanout.peers

    def tasks(self, **options: Any) -> TaskEngine:
        """The Server's `tasks=`: a TaskEngine (`options` are its own) whose tasks live in the same Redis,
        any worker answering for any task."""
        fanout = self._handed()
        if fanout.engine is None:
            store = RedisTaskStore(
                self.client(), self.prefix, durability=self.durability(), **self.task_bounds
            )
            self.state().watch.also.append(store.store_again)  # task ends a failover lost, written again
            fanout.engine = TaskEngine(store, workers=ClusterTasks(self.state(), self.worker), **options)
        return fanout.engine

    def adopt(self, server: Server) -> Server:
        """Give a Server built without this backplane's parts (a file that `mcpkit serve --workers N
        --redis URL` loads) its `peers()` and `tasks()`, keeping their limits: the one explicit step of
        assembling such a server, before it serves anything. Built in code, pass them to `Server()`.
        A server whose requestState key is random per process gets `state_key()` (blocking), so every
        worker opens the state any other sealed."""
        old_peers, old_tasks = server.peers, server.tasks
        sealer = server.state_sealer
        if sealer.random_key:
            server.state_sealer = StateSealer(self.state_key(), ttl=sealer.ttl, max_size=sealer.max_size)
        server.peers = self.peers(
            max_subscriptions=old_peers.max_subscriptions, max_uri_length=old_peers.max_uri_length
        )
        server.tasks = self.tasks(
            ttl_ms=old_tasks.ttl_ms,
            anonymous_ttl_ms=old_tasks.anonymous_ttl_ms,
            poll_interval_ms=old_tasks.poll_interval_ms,
            max_live_per_owner=old_tasks.max_live,
        )
        return server

    def _handed(self) -> Fanout:
        """The parts handed out so far, which the bus reaches."""
        if self._fanout is None:
            self._fanout = Fanout(ClusterRelay(self.state()))
        return self._fanout

    def sessions(
        self,
        serve: Callable[[SessionStream], Awaitable[None]],
        target: Any,
        answering: Answering,
        *,
        strict_version: bool,
    ) -> ClusterSessions:
        """The app's session host. A Server served with it must have been built with this backplane's
        `peers()` and `tasks()`, or its subscriptions and tasks would be this worker's alone."""
        fanout = self._handed()
        if isinstance(target, Server) and (
            target.peers is not fanout.peers or target.tasks is not fanout.engine
        ):
            raise ValueError(_ASSEMBLY)
        return ClusterSessions(
            self.state(),
            self.worker,
            serve,
            answering,
            strict_version=strict_version,
            heartbeat=self.heartbeat,
            dead_after=self.dead_after,
            fanout=fanout,
            warm=WarmReplicas(self.warm_sessions, min(_WARM_IDLE, self.idle_timeout / 2)),
        )


def _check_store(
    named: object, cluster: bool, prefix: str, wait_replicas: int, wait_timeout: float, warm: int
) -> None:
    """`named`: the url, else the redis client (None: neither)."""
    if named is None:
        raise ValueError("RedisBackplane needs a url or a redis client")
    if cluster and isinstance(named, str) and is_sentinel_url(named):
        raise ValueError("cluster=True takes a node's redis:// URL, not a Sentinel URL")
    if "{" in prefix or "}" in prefix:
        raise ValueError("a RedisBackplane prefix holds no '{' or '}': the keys' hash tags are its own")
    if wait_replicas < 0 or wait_timeout <= 0:
        raise ValueError("wait_replicas must be 0 or more and wait_timeout positive")
    if warm < 0:
        raise ValueError("warm_sessions must be 0 or more")


_ASSEMBLY = """a Server served with a RedisBackplane is built with its parts:
    backplane = RedisBackplane(url)
    server = Server(name, peers=backplane.peers(), tasks=backplane.tasks())
    app = StreamableHTTPApp(server, backplane=backplane)"""


def _task_bounds(max_tasks: int, max_live: int, max_bytes: int, max_task_bytes: int) -> dict[str, int]:
    """The bounds of the tasks kept in Redis, as RedisTaskStore takes them."""
    return {
        "max_tasks": max_tasks,
        "max_live": max_live,
        "max_bytes": max_bytes,
        "max_task_bytes": max_task_bytes,
    }
