"""`mcpkit serve FILE --http --workers N --redis URL` (or `--reload`): uvicorn worker processes serving one
Server; with Redis its sessions are shared (mcpkit.cluster), so any worker serves any request.

uvicorn starts each worker from an import string, so the target and the settings travel in the
environment; `build` is the factory every worker calls.
"""

from __future__ import annotations

import argparse
import os
import secrets
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson

from .errors import Failure, UsageError
from .keys import guarded
from .load import load_target
from .login import login_server
from .ops import behind_proxies, operations, uvicorn_options

__all__ = [
    "STATE_KEY_FILE_ENV",
    "add_state_key_file",
    "build",
    "check_redis_url",
    "one_process_key",
    "serve_workers",
    "shared_key",
]

STATE_KEY_FILE_ENV = "MCPKIT_STATE_KEY_FILE"

_TARGET = "MCPKIT_SERVE_TARGET"
_REDIS = "MCPKIT_SERVE_REDIS"
_REDIS_CLUSTER = "MCPKIT_SERVE_REDIS_CLUSTER"  # "1": the Redis URL names a node of a Redis Cluster
_STATE_KEY = "MCPKIT_SERVE_STATE_KEY"
_SETTINGS = "MCPKIT_SERVE_SETTINGS"


def serve_workers(
    target: str,
    *,
    host: str,
    port: int,
    workers: int,
    redis_url: str | None,
    redis_cluster: bool = False,
    argv: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    reload_dir: str | None = None,
    log_level: str | None = None,
    operations: dict[str, Any] | None = None,
    api_keys: tuple[str, str] | None = None,
    login: dict[str, Any] | None = None,
    state_key: bytes | None = None,
) -> None:
    """Run `workers` processes on host:port until interrupted. Several workers need `redis_url`: without
    a shared store each would know only the sessions it created (`redis_cluster`: it names a node of a
    Redis Cluster). `reload_dir`: one worker, restarted when a file under that directory changes.
    `api_keys`: a key file and the resource URL its keys are for (see cli.keys). `login`: the settings of
    the authorization server in front of the endpoint (cli.login), its store in that Redis. `state_key`:
    the requestState key of every worker (None: one drawn for this run)."""
    import uvicorn

    os.environ[_TARGET] = target
    os.environ[_REDIS] = redis_url or ""
    os.environ[_REDIS_CLUSTER] = "1" if redis_cluster else ""
    settings = {
        "argv": list(argv),
        "hosts": list(allowed_hosts),
        "origins": list(allowed_origins),
        "api_keys": list(api_keys) if api_keys else None,
        "login": login,
    }
    os.environ[_SETTINGS] = orjson.dumps({**settings, "operations": operations or {}}).decode()
    # one requestState key for every worker of this run, unless the server names its own
    if state_key is not None:
        os.environ[_STATE_KEY] = state_key.hex()
    else:
        os.environ.setdefault(_STATE_KEY, secrets.token_hex(32))
    factory = f"{__name__}:build"
    options: dict[str, Any] = {"workers": workers, **uvicorn_options(operations or {})}
    if reload_dir is not None:
        options = {"reload": True, "reload_dirs": [reload_dir]}
    level = log_level or "warning"  # mcpkit has said where it serves
    uvicorn.run(factory, factory=True, host=host, port=port, lifespan="on", log_level=level, **options)


def check_redis_url(url: str, cluster: bool = False) -> None:
    """Failure (one line) unless `url` is a Redis URL whose server answers PING: checked once here, not
    by every worker crashing and being restarted."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel"):
        raise UsageError(
            f"--redis {url!r} is not a Redis URL (redis://HOST[:PORT][/DB], rediss://, unix:// or "
            "redis+sentinel://HOST:PORT[,HOST:PORT...]/SERVICE[/DB])"
        )
    if cluster and scheme.endswith("+sentinel"):
        raise UsageError("--redis-cluster takes a node's redis:// URL; a Sentinel URL goes to --redis")
    from ..cluster.startup import StoreRefused, check_reachable

    try:
        check_reachable(url, cluster=cluster)
    except StoreRefused as exc:
        raise Failure(str(exc)) from None


def add_state_key_file(serve: argparse.ArgumentParser) -> None:
    """`mcpkit serve --state-key-file PATH`, read by `shared_key`."""
    serve.add_argument(
        "--state-key-file",
        metavar="PATH",
        help="seal 2026-07-28 requestState with the key in this file (32 bytes or more, e.g. `openssl rand "
        f"-hex 32`), the same file on every machine; also ${STATE_KEY_FILE_ENV}. Default: with --redis a "
        "key derived from a secret kept in that Redis, else one drawn at start",
    )


def shared_key(key_file: str | None, redis_url: str | None, cluster: bool = False) -> bytes | None:
    """The requestState key of every worker of this run, and of every machine given the same file or
    Redis: the file's (`key_file`, else $MCPKIT_STATE_KEY_FILE), else with `redis_url` the key derived
    from the secret kept there (mcpkit.cluster.startup), else None (one process draws its own). A file
    that cannot be used is a UsageError, a Redis that cannot be a Failure: one line, before serving."""
    path = key_file or os.environ.get(STATE_KEY_FILE_ENV) or None
    if path is not None:
        from ..server.request_state import read_state_key

        try:
            return read_state_key(path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if redis_url is None:
        return None
    from ..cluster.startup import StoreRefused, shared_state_key

    try:
        return shared_state_key(redis_url, cluster=cluster)
    except StoreRefused as exc:
        raise Failure(str(exc)) from None


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

        cluster = os.environ.get(_REDIS_CLUSTER) == "1"
        backplane = RedisBackplane(os.environ[_REDIS], cluster=cluster, worker=f"p{os.getpid()}")
        backplane.adopt(server)  # its peers and tasks across the workers
    hosts, origins = settings.get("hosts") or None, settings.get("origins") or None
    ops = operations(settings.get("operations") or {}, server)
    app = StreamableHTTPApp(
        server, backplane=backplane, allowed_hosts=hosts, allowed_origins=origins, operations=ops
    )
    keys = settings.get("api_keys")
    login = None
    if settings.get("login"):
        redis = backplane.client() if backplane is not None else None
        login = login_server(settings["login"], bytes.fromhex(key) if key else None, redis)
    protected = guarded(app, tuple(keys) if keys else None, login)
    return behind_proxies(protected, settings.get("operations") or {})
