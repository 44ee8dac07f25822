"""Where a server's metrics go: one `Metrics` interface, a Prometheus and an OpenTelemetry implementation.

Names follow the OpenTelemetry semantic conventions for MCP: `mcp.server.operation.duration` (a histogram
in seconds with `mcp.method.name`, the item's name and `error.type`), plus gauges read when collected
(`mcp.server.requests.in_flight`, `mcp.server.sessions`, `mcp.server.sse_streams`). Prometheus spells them
with underscores (`mcp_server_operation_duration_seconds`). Label values come from the server's registry,
never from the request, so the series stay bounded. Each process reports its own; sum across workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..protocol.methods import METHODS

__all__ = ["DURATION", "Metrics", "OpenTelemetryMetrics", "PrometheusMetrics"]

DURATION = "mcp.server.operation.duration"
# seconds; the OpenTelemetry MCP conventions' advice, finer at the fast end
BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


class Metrics(Protocol):
    def operation(self, method: str, name: str, seconds: float, error: str) -> None:
        """One request handled: its method, the item it named ("" for none), how long, `error` ("" if
        none, else the JSON-RPC code or "tool_error")."""
        ...

    def observe(self, gauge: str, read: Callable[[], float]) -> None:
        """A gauge whose value `read()` gives when metrics are collected."""
        ...

    def exposition(self) -> tuple[bytes, str] | None:
        """The text a scraper reads and its content type, or None when the metrics are pushed elsewhere."""
        ...


class PrometheusMetrics:
    """Metrics in a prometheus-client registry of their own (`pip install prometheus-client`), served by
    `StreamableHTTPApp(operations=Operations(metrics=...))` at `/metrics`."""

    def __init__(self, registry: Any = None) -> None:
        from prometheus_client import CollectorRegistry, Histogram

        self.registry = registry if registry is not None else CollectorRegistry()
        self._duration = Histogram(
            _prometheus(DURATION) + "_seconds",
            "MCP requests handled, by method, item name and error type (empty: none)",
            ("mcp_method_name", "mcp_name", "error_type"),
            registry=self.registry,
            buckets=BUCKETS,
        )

    def operation(self, method: str, name: str, seconds: float, error: str) -> None:
        self._duration.labels(method, name, error).observe(seconds)

    def observe(self, gauge: str, read: Callable[[], float]) -> None:
        from prometheus_client import Gauge

        Gauge(_prometheus(gauge), gauge, registry=self.registry).set_function(read)

    def exposition(self) -> tuple[bytes, str] | None:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class OpenTelemetryMetrics:
    """Metrics through the OpenTelemetry metrics API (the `otel` extra): the global MeterProvider, or
    `provider`; export them with the SDK's readers as usual."""

    def __init__(self, provider: Any = None) -> None:
        from opentelemetry import metrics

        self._meter = (provider or metrics.get_meter_provider()).get_meter("mcpkit")
        self._duration = self._meter.create_histogram(
            DURATION,
            unit="s",
            description="MCP requests handled",
            explicit_bucket_boundaries_advisory=BUCKETS,
        )

    def operation(self, method: str, name: str, seconds: float, error: str) -> None:
        attributes = {"mcp.method.name": method}
        if name:
            attributes[_OTEL_NAME.get(method, "mcp.name")] = name
        if error:
            attributes["error.type"] = error
        self._duration.record(seconds, attributes)

    def observe(self, gauge: str, read: Callable[[], float]) -> None:
        from opentelemetry.metrics import Observation

        self._meter.create_observable_gauge(gauge, callbacks=[lambda options: [Observation(read())]])

    def exposition(self) -> tuple[bytes, str] | None:
        return None


_OTEL_NAME = {method: spec.span_target for method, spec in METHODS.items() if spec.span_target is not None}


def _prometheus(name: str) -> str:
    return name.replace(".", "_")
