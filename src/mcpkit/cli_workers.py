"""`mcpkit serve FILE --http --workers N --redis URL`: several uvicorn worker processes serving one Server
whose sessions are shared in Redis (mcpkit.cluster), so any worker serves any request.

uvicorn starts each worker from an import string, so the target and the settings travel in the
environment; `build` is the factory every worker calls.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

__all__ = ["build", "serve_workers"]

_TARGET, _REDIS, _STATE_KEY, _HOSTS = (
    "MCPKIT_SERVE_TARGET",
    "MCPKIT_SERVE_REDIS",
    "MCPKIT_SERVE_STATE_KEY",
    "MCPKIT_SERVE_HOSTS",
)


def serve_workers(target: str, *, host: str, port: int, workers: int, redis_url: str | None) -> None:
    """Run `workers` processes on host:port until interrupted. Several workers need `redis_url`: without
    a shared store each would know only the sessions it created."""
    import uvicorn

    os.environ[_TARGET] = target
    os.environ[_REDIS] = redis_url or ""
    # one requestState key for every worker of this run, unless the server names its own
    os.environ.setdefault(_STATE_KEY, secrets.token_hex(32))
    factory = f"{__name__}:build"
    uvicorn.run(factory, factory=True, host=host, port=port, workers=workers, lifespan="on")


def build() -> Any:
    """The app of one worker: the target's Server over Streamable HTTP, with a RedisBackplane when a
    Redis URL was given."""
    from .cli import load_target
    from .server.request_state import StateSealer
    from .transports.http_server import StreamableHTTPApp

    server = load_target(os.environ[_TARGET])
    sealer = getattr(server, "state_sealer", None)
    key = os.environ.get(_STATE_KEY)
    if isinstance(sealer, StateSealer) and sealer.random_key and key:
        server.state_sealer = StateSealer(bytes.fromhex(key), ttl=sealer.ttl, max_size=sealer.max_size)
    backplane = None
    if os.environ.get(_REDIS):
        from .cluster import RedisBackplane

        backplane = RedisBackplane(os.environ[_REDIS], worker=f"p{os.getpid()}")
    hosts = os.environ.get(_HOSTS)
    options: dict[str, Any] = {"allowed_hosts": hosts.split(",")} if hosts else {}
    return StreamableHTTPApp(server, backplane=backplane, **options)
