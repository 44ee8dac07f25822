"""Redis behind Sentinel, named by one URL:

    redis+sentinel://[:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB][?OPTIONS]

the sentinels (port 26379 unless given) and the name they monitor the primary under; `rediss+sentinel://`
reaches the primary over TLS. PASSWORD (and a user before it) and OPTIONS (redis-py's, as in a `redis://`
URL: `ssl_ca_certs=...`) are the primary's; the sentinels are asked without either. A
client made here asks a sentinel where the primary is whenever it opens a connection, and drops its idle
connections once the answer changes: after a failover, every new connection goes to the promoted replica,
and a connection still open to the old primary fails (the request answered as an outage, 503, until then).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from redis.asyncio.sentinel import SentinelConnectionPool

from .pool import WaitingPool

if TYPE_CHECKING:
    import redis

__all__ = ["SCHEMES", "SentinelTarget", "blocking_primary", "is_sentinel_url", "parse", "sentinel_pool"]

SCHEMES = ("redis+sentinel", "rediss+sentinel")
_PORT = 26379


@dataclass(frozen=True, slots=True)
class SentinelTarget:
    """What a sentinel URL names."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str = dataclasses.field(default="", repr=False)
    ssl: bool = False
    query: str = ""

    def primary_options(self) -> dict[str, Any]:
        """How to reach the primary once a sentinel said where it is: redis-py's reading of the same URL
        as `redis://` (`rediss://`), its host left to the sentinels."""
        from redis.connection import parse_url

        userinfo = f"{quote(self.username or '', safe='')}:{quote(self.password, safe='')}@"
        scheme = "rediss" if self.ssl else "redis"
        options: dict[str, Any] = parse_url(f"{scheme}://{userinfo}sentinel/{self.db}?{self.query}")  # type: ignore[no-untyped-call]
        for chosen_by_sentinel in ("host", "port", "connection_class"):
            options.pop(chosen_by_sentinel, None)
        return {**options, "ssl": True} if self.ssl else options


def is_sentinel_url(url: str) -> bool:
    return url.partition("://")[0].lower() in SCHEMES


def parse(url: str) -> SentinelTarget:
    """The sentinels, service and database a sentinel URL names; ValueError (its message one line,
    without the password) when it names none."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise ValueError(f"not a Sentinel URL (scheme {parts.scheme!r}): {' or '.join(SCHEMES)}://")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    path = [p for p in parts.path.split("/") if p]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError("a Sentinel URL names its service after the hosts: .../SERVICE or .../SERVICE/DB")
    sentinels = tuple(_host_port(host) for host in hosts.split(",") if host)
    if not sentinels:
        raise ValueError("a Sentinel URL names at least one sentinel: redis+sentinel://HOST:PORT/SERVICE")
    return SentinelTarget(
        sentinels,
        unquote(path[0]),
        int(path[1]) if len(path) == 2 else 0,
        unquote(username) or None,
        unquote(password),
        parts.scheme.lower() == "rediss+sentinel",
        parts.query,
    )


def _host_port(text: str) -> tuple[str, int]:
    host, port = text, ""
    if text.startswith("["):  # [v6 address]:port
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif ":" in text:
        host, _, port = text.rpartition(":")
    if not host or (port and not port.isdigit()):
        raise ValueError(f"a Sentinel URL's hosts are HOST[:PORT], not {text!r}")
    return host, int(port) if port else _PORT


class WaitingSentinelPool(SentinelConnectionPool, WaitingPool):
    """The backplane's pool (a command waits `timeout` for a free connection, its traffic counted) whose
    connections go where the sentinels say the primary is."""

    def __init__(self, service: str, manager: Any, **options: Any) -> None:
        super().__init__(service, manager, **options)  # type: ignore[no-untyped-call]


def sentinel_pool(url: str, **options: Any) -> WaitingSentinelPool:
    """The backplane's waiting pool (`options` as `WaitingPool.from_url` takes them) whose connections
    go to the primary the sentinel URL names."""
    from redis.asyncio.sentinel import Sentinel

    target = parse(url)
    sockets = {k: v for k, v in options.items() if k.startswith("socket_")}
    manager = Sentinel(target.sentinels, sentinel_kwargs=sockets)
    return WaitingSentinelPool(target.service, manager, **{**options, **target.primary_options()})


def blocking_primary(url: str, timeout: float) -> redis.Redis:
    """A blocking client of the primary a sentinel URL names (for a program's start)."""
    from redis.sentinel import Sentinel

    target = parse(url)
    sockets: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    manager = Sentinel(target.sentinels, sentinel_kwargs=sockets)
    client: redis.Redis = manager.master_for(target.service, **{**sockets, **target.primary_options()})
    return client
