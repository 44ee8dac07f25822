"""`mcpkit serve --http`'s operations options: probes, drain, heartbeats, and the checks made before serving
so a configuration error is one line and a non-zero exit, not a process that refuses everything."""

from __future__ import annotations

import argparse
import signal
from typing import Any

from .cli_errors import UsageError

__all__ = ["add_operations", "check_redis", "operations", "operations_settings", "quiet_sigterm"]

# past the app's own drain deadline, uvicorn cancels what still runs after this much longer
UVICORN_GRACE = 5.0


def add_operations(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--drain-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, how long requests in flight may run on before they are ended (default 30)",
    )
    serve.add_argument(
        "--sse-heartbeat",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="an SSE comment on idle GET streams this often, for idle proxies (default 15; 0: never)",
    )
    serve.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at /metrics (pip install prometheus-client)",
    )


def operations_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The options as plain values, for worker processes."""
    if args.drain_timeout < 0 or args.sse_heartbeat < 0:
        raise UsageError("--drain-timeout and --sse-heartbeat must not be negative")
    if args.metrics:
        try:
            import prometheus_client  # noqa: F401
        except ImportError:
            raise UsageError("--metrics needs prometheus-client: pip install prometheus-client") from None
    settings = {"drain_timeout": args.drain_timeout, "heartbeat": args.sse_heartbeat or None}
    return {**settings, "metrics": args.metrics}


def operations(settings: dict[str, Any], server: Any) -> Any:
    """The app's Operations from `operations_settings`; with metrics, `server` measures its requests."""
    from .transports.http_server.probes import Operations

    options = dict(settings)
    if options.pop("metrics", False):
        from .runtime.metrics import PrometheusMetrics
        from .server.measure import Measure

        options["metrics"] = metrics = PrometheusMetrics()
        server.middleware.add(Measure(metrics, server.registry))
    return Operations(**options)


def uvicorn_options(settings: dict[str, Any]) -> dict[str, Any]:
    return {"timeout_graceful_shutdown": float(settings.get("drain_timeout", 30.0)) + UVICORN_GRACE}


def quiet_sigterm() -> None:
    """uvicorn re-raises the SIGTERM it handled once it has shut down; with this handler in place
    (restored by uvicorn) that ends the command normally, so a drained server exits 0."""
    signal.signal(signal.SIGTERM, lambda signum, frame: None)


def check_redis(url: str, timeout: float = 5.0) -> None:
    """A UsageError naming what is wrong unless Redis at `url` answers a PING (password and database
    included)."""
    import anyio

    async def ping() -> None:
        from redis.asyncio import Redis

        client = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            await client.ping()
        finally:
            await client.aclose()

    try:
        anyio.run(ping)
    except Exception as exc:
        raise UsageError(f"cannot use Redis at {_redacted(url)}: {exc}") from None


def _redacted(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return url
