"""`Measure`: the middleware that turns each request into metrics (mcpkit.runtime.metrics)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..protocol.errors import METHOD_NOT_FOUND, MCPError
from ..protocol.jsonrpc import JSON
from ..runtime.metrics import Metrics

if TYPE_CHECKING:
    from .context import Context
    from .middleware.chain import Call
    from .registry import Registry

__all__ = ["Measure"]


class Measure:
    """Each request's duration and outcome to `metrics`, and the requests in flight as a gauge.

    Labels stay bounded: an item's name is recorded only when `registry` has it (else "other"), and a
    method the server does not know is recorded as "other".

        server.middleware.add(Measure(PrometheusMetrics(), server.registry))
    """

    def __init__(self, metrics: Metrics, registry: Registry) -> None:
        self.metrics, self.registry = metrics, registry
        self.in_flight = 0
        metrics.observe("mcp.server.requests.in_flight", lambda: self.in_flight)

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        start, error = time.perf_counter(), ""
        self.in_flight += 1
        try:
            result = await call_next(params)
            if result.get("isError"):
                error = "tool_error"
            return result
        except MCPError as exc:
            error = str(exc.code)
            raise
        except BaseException as exc:
            error = type(exc).__name__
            raise
        finally:
            self.in_flight -= 1
            known = error != str(METHOD_NOT_FOUND)
            name = self._name(method, params) if known else ""
            self.metrics.operation(method if known else "other", name, time.perf_counter() - start, error)

    def _name(self, method: str, params: JSON) -> str:
        registry, value = self.registry, params.get("uri" if method == "resources/read" else "name")
        if method == "tools/call":
            known = value in registry.tools
        elif method == "prompts/get":
            known = value in registry.prompts
        elif method == "resources/read":
            known = value in registry.resources
        else:
            return ""
        return value if known and isinstance(value, str) else "other"
