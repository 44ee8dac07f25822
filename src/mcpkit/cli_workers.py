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

import orjson

__all__ = ["build", "serve_workers"]

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
    from .cli_ops import uvicorn_options

    options: dict[str, Any] = {"workers": workers, **uvicorn_options(operations or {})}
    if reload_dir is not None:
        options = {"reload": True, "reload_dirs": [reload_dir], **uvicorn_options(operations or {})}
    uvicorn.run(factory, factory=True, host=host, port=port, lifespan="on", log_level=log_level, **options)


def build() -> Any:
    """The app of one worker: the target's Server over Streamable HTTP, with a RedisBackplane when a
    Redis URL was given."""
    from .cli_ops import behind_proxies, operations
    from .cli_serve import load_target
    from .server.request_state import StateSealer
    from .transports.http_server import StreamableHTTPApp

    settings = orjson.loads(os.environ.get(_SETTINGS) or "{}")
    server = load_target(os.environ[_TARGET], settings.get("argv", ()))
    sealer = getattr(server, "state_sealer", None)
    key = os.environ.get(_STATE_KEY)
    if isinstance(sealer, StateSealer) and sealer.random_key and key:
        server.state_sealer = StateSealer(bytes.fromhex(key), ttl=sealer.ttl, max_size=sealer.max_size)
    backplane = None
    if os.environ.get(_REDIS):
        from .cluster import RedisBackplane

        backplane = RedisBackplane(os.environ[_REDIS], worker=f"p{os.getpid()}")
    hosts, origins = settings.get("hosts") or None, settings.get("origins") or None
    ops = operations(settings.get("operations") or {}, server)
    app = StreamableHTTPApp(
        server, backplane=backplane, allowed_hosts=hosts, allowed_origins=origins, operations=ops
    )
    return behind_proxies(app, settings.get("operations") or {})
