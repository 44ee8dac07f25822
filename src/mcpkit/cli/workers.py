"""`mcpkit serve FILE --http --workers N --redis URL` (or `--reload`): uvicorn worker processes serving one
Server; with Redis its sessions are shared (mcpkit.cluster), so any worker serves any request.

uvicorn starts each worker from an import string, so the target and the settings travel in the
environment; `build` is the factory every worker calls.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson

from .errors import Failure, UsageError
from .load import load_target
from .ops import behind_proxies, operations, uvicorn_options

__all__ = ["build", "check_redis_url", "one_process_key", "serve_workers"]

_TARGET, _REDIS, _STATE_KEY, _SETTINGS = (
    "MCPKIT_SERVE_TARGET",
    "MCPKIT_SERVE_REDIS",
    "MCPKIT_SERVE_STATE_KEY",
    "MCPKIT_SERVE_SETTINGS",
)


def serve_workers(
    target: str,
    *,
    host: str,
    port: int,
    workers: int,
    redis_url: str | None,
    argv: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    reload_dir: str | None = None,
    log_level: str | None = None,
    operations: dict[str, Any] | None = None,
) -> None:
    """Run `workers` processes on host:port until interrupted. Several workers need `redis_url`: without
    a shared store each would know only the sessions it created. `reload_dir`: one worker, restarted
    when a file under that directory changes."""
    import uvicorn

    os.environ[_TARGET] = target
    os.environ[_REDIS] = redis_url or ""
    settings = {"argv": list(argv), "hosts": list(allowed_hosts), "origins": list(allowed_origins)}
    os.environ[_SETTINGS] = orjson.dumps({**settings, "operations": operations or {}}).decode()
    # one requestState key for every worker of this run, unless the server names its own
    os.environ.setdefault(_STATE_KEY, secrets.token_hex(32))
    factory = f"{__name__}:build"
    options: dict[str, Any] = {"workers": workers, **uvicorn_options(operations or {})}
    if reload_dir is not None:
        options = {"reload": True, "reload_dirs": [reload_dir]}
    level = log_level or "warning"  # mcpkit has said where it serves
    uvicorn.run(factory, factory=True, host=host, port=port, lifespan="on", log_level=level, **options)


def check_redis_url(url: str) -> None:
    """Failure (one line) unless `url` is a Redis URL whose server answers PING: checked once here, not
    by every worker crashing and being restarted."""
    scheme = urlsplit(url).scheme
    if scheme not in ("redis", "rediss", "unix"):
        raise UsageError(
            f"--redis {url!r} is not a Redis URL (redis://HOST[:PORT][/DB], rediss:// or unix://)"
        )
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
        client.ping()
        client.close()
    except (redis.RedisError, ValueError, OSError) as exc:
        raise Failure(f"cannot reach Redis at {_redacted(url)}: {exc}") from None


def _redacted(url: str) -> str:
    """`url` without its password, which a log line must not carry."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return url


def one_process_key(server: Any, key: bytes | None = None) -> None:
    """Give a server whose requestState key is random per process a key made here (or `key`, shared by
    the workers): its warning is about several processes or restarts, and the CLI knows which it runs."""
    from ..server.request_state import StateSealer

    sealer = getattr(server, "state_sealer", None)
    if isinstance(sealer, StateSealer) and sealer.random_key:
        fresh = key or secrets.token_bytes(32)
        server.state_sealer = StateSealer(fresh, ttl=sealer.ttl, max_size=sealer.max_size)


def build() -> Any:
    """The app of one worker: the target's Server over Streamable HTTP, with a RedisBackplane when a
    Redis URL was given."""
    from ..transports.http_server import StreamableHTTPApp

    settings = orjson.loads(os.environ.get(_SETTINGS) or "{}")
    server = load_target(os.environ[_TARGET], settings.get("argv", ()))
    key = os.environ.get(_STATE_KEY)
    if key:
        one_process_key(server, bytes.fromhex(key))
    backplane = None
    if os.environ.get(_REDIS):
        from ..cluster import RedisBackplane

        backplane = RedisBackplane(os.environ[_REDIS], worker=f"p{os.getpid()}")
        backplane.adopt(server)  # its peers and tasks across the workers
    hosts, origins = settings.get("hosts") or None, settings.get("origins") or None
    ops = operations(settings.get("operations") or {}, server)
    app = StreamableHTTPApp(
        server, backplane=backplane, allowed_hosts=hosts, allowed_origins=origins, operations=ops
    )
    return behind_proxies(app, settings.get("operations") or {})
