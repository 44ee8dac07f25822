"""`mcpkit serve --http`'s operations options: probes, drain, heartbeats, and the checks made before serving
so a configuration error is one line and a non-zero exit, not a process that refuses everything."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from typing import Any
from urllib.parse import urlsplit

from .errors import UsageError

__all__ = [
    "add_operations",
    "behind_proxies",
    "configure_logs",
    "log_requests",
    "operations",
    "operations_settings",
    "public_hosts",
    "quiet_sigterm",
    "uvicorn_options",
]

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
        help="an SSE comment on idle SSE responses this often, for idle proxies (default 15; 0: never)",
    )
    serve.add_argument(
        "--metrics",
        action="store_true",
        help="serve Prometheus metrics at /metrics (pip install prometheus-client)",
    )
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text lines, or one JSON object per line with each request's method, name, session, trace "
        "id and duration at --log-level info (default text)",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="honour X-Forwarded-For/-Proto/-Host only from these proxies (comma-separated addresses or "
        "networks, * for any); without it they are ignored",
    )
    serve.add_argument(
        "--public-url",
        metavar="URL",
        help="the URL clients use, e.g. https://mcp.example.com/mcp behind a TLS-terminating proxy: "
        "its host is answered and it is the URL the server announces",
    )


def configure_logs(level: str, log_format: str) -> None:
    """stderr logging at `level`, as text or one JSON object per line."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        from ..runtime.json_logs import JSONFormatter

        handler.setFormatter(JSONFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


def log_requests(server: Any, log_format: str, level: str) -> None:
    """With JSON logs (set up again here, for worker processes), a record per request (mcpkit.requests,
    INFO) carries its method, name, session, trace id and duration."""
    if log_format == "json":
        from ..server.middlewares import RequestLog

        configure_logs(level, "json")
        server.middleware.add(RequestLog())


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
    public_hosts(args)  # a bad URL is refused before anything starts
    proxies = [p for p in (args.forwarded_allow_ips or "").split(",") if p.strip()]
    try:
        from ..transports.http_server.forwarded import TrustedProxies

        TrustedProxies(None, proxies)
    except ValueError as exc:
        raise UsageError(f"--forwarded-allow-ips: {exc}") from None
    return {
        **settings,
        "metrics": args.metrics,
        "proxies": proxies,
        "log_format": args.log_format,
        "log_level": args.log_level or "warning",
    }


def public_hosts(args: argparse.Namespace) -> list[str]:
    """The host of --public-url (answered by the Host check), checked to be an http(s) URL."""
    if args.public_url is None:
        return []
    url = urlsplit(args.public_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise UsageError(f"--public-url {args.public_url!r} is not an http(s) URL with a host")
    return [url.netloc.rpartition("@")[2].lower()]


def behind_proxies(app: Any, settings: dict[str, Any]) -> Any:
    """`app`, wrapped to honour forwarded headers from the trusted proxies when there are any."""
    if not settings.get("proxies"):
        return app
    from ..transports.http_server.forwarded import TrustedProxies

    return TrustedProxies(app, settings["proxies"])


def operations(settings: dict[str, Any], server: Any) -> Any:
    """The app's Operations from `operations_settings`; with metrics, `server` measures its requests."""
    from ..transports.http_server.probes import Operations

    options = dict(settings)
    options.pop("proxies", None)
    log_requests(server, options.pop("log_format", "text"), options.pop("log_level", "warning"))
    if options.pop("metrics", False):
        from ..runtime.metrics import PrometheusMetrics
        from ..server.measure import Measure

        options["metrics"] = metrics = PrometheusMetrics()
        server.middleware.add(Measure(metrics, server.registry))
    return Operations(**options)


def uvicorn_options(settings: dict[str, Any]) -> dict[str, Any]:
    grace = float(settings.get("drain_timeout", 30.0)) + UVICORN_GRACE
    # with trusted proxies named, TrustedProxies reads the forwarded headers and uvicorn must not
    proxies = {"proxy_headers": False} if settings.get("proxies") else {}
    # JSON: uvicorn's loggers propagate to the root handler instead of formatting their own lines
    logs = {"log_config": None} if settings.get("log_format") == "json" else {}
    return {"timeout_graceful_shutdown": grace, **proxies, **logs}


def quiet_sigterm() -> None:
    """uvicorn re-raises the SIGTERM it handled once it has shut down; with this handler in place
    (restored by uvicorn) that ends the command normally, so a drained server exits 0."""
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
