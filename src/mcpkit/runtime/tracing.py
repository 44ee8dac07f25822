"""What both sides' OpenTelemetry spans share: names and attributes from the semantic conventions for
MCP (opentelemetry.io/docs/specs/semconv/gen-ai/mcp), the W3C trace context carried in a request's
`params._meta`, and how an outcome is recorded on a span.

opentelemetry-api is optional (`pip install mcpkit[otel]`): nothing here imports it until a Server or
Client is made with `tracing=` (`load`), so mcpkit without tracing neither needs nor loads it.

Spec 2026-07-28 basic "_meta": `traceparent`, `tracestate` and `baggage` are reserved, unprefixed, for
OpenTelemetry trace context, and when present MUST follow the W3C Trace Context and Baggage formats:
they are written by the configured propagators only (which write nothing else), and read back only as
strings, which the propagators check (a malformed one is ignored, as if absent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from ..protocol.errors import MCPError
from ..protocol.jsonrpc import JSON
from ..protocol.methods import METHODS

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = ["TracingOption", "carrier_of", "load", "record_failure", "record_result", "span_of", "tracer_for"]

# `tracing=` on a Server or Client: False (none), True (the global TracerProvider's tracer) or a provider
TracingOption: TypeAlias = "bool | TracerProvider"
INSTRUMENTATION = "mcpkit"


def load() -> None:
    """Import opentelemetry-api, or say how to get it."""
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        raise ImportError("tracing needs opentelemetry-api: pip install 'mcpkit[otel]'") from None


def tracer_for(tracing: bool | TracerProvider) -> Tracer:
    """The tracer a `tracing=` option names: True, the global TracerProvider; else that provider."""
    load()
    from opentelemetry import trace

    provider = None if isinstance(tracing, bool) else tracing
    return trace.get_tracer(INSTRUMENTATION, tracer_provider=provider)


def span_of(method: str, params: Mapping[str, Any] | None) -> tuple[str, JSON]:
    """The span name (`{mcp.method.name} {target}`) and the attributes a request's method and params give."""
    attributes: JSON = {"mcp.method.name": method}
    name = method
    spec = METHODS.get(method)
    if params and spec is not None and spec.item is not None and spec.span_target is not None:
        target = params.get(spec.item)
        if isinstance(target, str):
            attributes[spec.span_target] = target
            # semconv MCP: a tool or prompt names the span; a resource URI stays out (cardinality)
            name = f"{method} {target}" if spec.item == "name" else name
    if params and method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
    return name, attributes


def carrier_of(meta: Mapping[str, Any]) -> dict[str, str]:
    """The propagators' view of a `_meta` object: its string values only (a peer may send anything)."""
    return {key: value for key, value in meta.items() if isinstance(value, str)}


def record_result(span: Span, result: Mapping[str, Any]) -> None:
    """semconv MCP error.type: a CallToolResult with isError is the operation failing as `tool_error`."""
    if result.get("isError") is True:
        from opentelemetry.trace import StatusCode

        span.set_attribute("error.type", "tool_error")
        span.set_status(StatusCode.ERROR)


def record_failure(span: Span, exc: BaseException) -> None:
    """An error response (error.type and rpc.response.status_code: its code; status: its message), or
    an exception that is no JSON-RPC error (error.type: its class, and the exception as an event)."""
    from opentelemetry.trace import StatusCode

    if isinstance(exc, MCPError):
        code = str(exc.code)
        span.set_attributes({"error.type": code, "rpc.response.status_code": code})
        span.set_status(StatusCode.ERROR, exc.message)
    else:
        span.set_attribute("error.type", type(exc).__qualname__)
        span.record_exception(exc)
        span.set_status(StatusCode.ERROR, str(exc) or type(exc).__qualname__)
