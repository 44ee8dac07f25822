"""What a worker checks and fetches from Redis once, before it serves: that Redis takes it (a wrong password
or an unreachable server is a configuration error at start, one line and a non-zero exit, not a worker
answering 503 forever), and the requestState key every worker and machine of the cluster shares.

The shared key is derived from a secret kept in Redis (`{prefix}state-secret`, 32 random bytes, written
once with SET NX by whichever worker comes first, never expiring): every process using the same Redis and
prefix seals and opens requestState alike, with nothing to distribute. Whoever can read that Redis can
forge requestState, the same trust its sessions already need; a key kept elsewhere is
`Server(state_key=...)` (`mcpkit serve --state-key-file`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import redis

from .sentinel import blocking_primary, is_sentinel_url

__all__ = ["SECRET_KEY_NAME", "StoreRefused", "check_reachable", "redacted", "shared_state_key"]

SECRET_KEY_NAME = "state-secret"
_PURPOSE = b"mcpkit requestState v1"  # the secret may seal other things one day: each gets its own key


class StoreRefused(RuntimeError):
    """Redis cannot be used at start: its message is the one line an operator needs."""


def redacted(url: str) -> str:
    """`url` without its password, which a log line must not carry."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return url


def _client(url: str, timeout: float, cluster: bool) -> redis.Redis | redis.RedisCluster:
    """A blocking client of Redis at `url`; `cluster`: a Redis Cluster, `url` naming any one node; a
    `redis+sentinel://` URL: the primary its sentinels name (cluster/sentinel.py)."""
    kind = redis.RedisCluster if cluster else redis.Redis
    try:
        if is_sentinel_url(url) and not cluster:
            return blocking_primary(url, timeout)
        return kind.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    except (ValueError, redis.RedisError, OSError) as exc:  # a cluster client asks for the slots at once
        raise StoreRefused(f"cannot reach Redis at {redacted(url)}: {exc}") from None


def check_reachable(url: str, timeout: float = 3.0, *, cluster: bool = False) -> None:
    """Return once Redis at `url` answers PING; StoreRefused (wrong password, unreachable, TLS refused)
    otherwise. Blocking: for a program's start."""
    client = _client(url, timeout, cluster)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        raise StoreRefused(f"cannot reach Redis at {redacted(url)}: {exc}") from None
    finally:
        client.close()


def shared_state_key(url: str, prefix: str = "mcp:", timeout: float = 3.0, *, cluster: bool = False) -> bytes:
    """The requestState key of every worker using Redis at `url` under `prefix`: HMAC-SHA256 of a fixed
    purpose under the secret kept there, the secret made on first use. Blocking: for a program's start;
    StoreRefused when Redis cannot be used."""
    client = _client(url, timeout, cluster)
    name = prefix + SECRET_KEY_NAME
    try:
        client.set(name, secrets.token_bytes(32), nx=True)
        secret = client.get(name)
    except (redis.RedisError, OSError) as exc:
        raise StoreRefused(f"cannot reach Redis at {redacted(url)}: {exc}") from None
    finally:
        client.close()
    if not isinstance(secret, bytes) or not secret:
        raise StoreRefused(f"Redis at {redacted(url)} lost {name} as soon as it was written (eviction?)")
    return hmac.new(secret, _PURPOSE, hashlib.sha256).digest()
