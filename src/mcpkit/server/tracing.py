"""OpenTelemetry on the server: a SERVER span around each request handled (the outermost middleware)
and each notification, a child of the client's span when the request's `_meta` carries a
`traceparent` (runtime/tracing.py: names, attributes, errors). `Server(tracing=True)` traces to the
global TracerProvider, `Server(tracing=provider)` to that one; a Server without it has no such
middleware and loads no OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..protocol.jsonrpc import JSON
from ..runtime.tracing import TracingOption, carrier_of, record_failure, record_result, span_of, tracer_for
from .round_trip import InputRequired

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from opentelemetry.trace import Span

    from .context import Context
    from .middleware.chain import Call

__all__ = ["ServerTracing"]


class ServerTracing:
    """The server's spans, on the tracer of `tracing` (True: the global TracerProvider's)."""

    def __init__(self, tracing: TracingOption = True) -> None:
        self.tracer = tracer_for(tracing)

    async def __call__(self, ctx: Context, method: str, params: JSON, call_next: Call) -> JSON:
        name, attributes = span_of(method, params)
        attributes["jsonrpc.request.id"] = str(ctx.request_id)
        attributes["mcp.protocol.version"] = ctx.negotiated.version
        if ctx.session_id is not None:
            attributes["mcp.session.id"] = ctx.session_id
        if ctx.request_headers is not None:
            attributes.update({"network.transport": "tcp", "network.protocol.name": "http"})
        with self._span(name, attributes, ctx.meta) as span:
            try:
                result = await call_next(params)
            except InputRequired:  # the input_required result this becomes is no failure
                raise
            except Exception as exc:
                record_failure(span, exc)
                raise
            record_result(span, result)
            return result

    async def notification(self, method: str, params: JSON, handle: Callable[[], Awaitable[None]]) -> None:
        """A span around handling one notification from the client."""
        name, attributes = span_of(method, params)
        meta = params.get("_meta")
        with self._span(name, attributes, meta if isinstance(meta, dict) else {}) as span:
            try:
                await handle()
            except Exception as exc:
                record_failure(span, exc)
                raise

    def _span(self, name: str, attributes: JSON, meta: Mapping[str, Any]) -> AbstractContextManager[Span]:
        from opentelemetry import propagate, trace

        parent, links = None, None
        if "traceparent" in meta:
            # semconv MCP: the context in `_meta` is the parent; the ambient one (an HTTP server's
            # span, say) is linked to
            parent = propagate.extract(carrier_of(meta))
            ambient = trace.get_current_span().get_span_context()
            links = [trace.Link(ambient)] if ambient.is_valid else None
        return self.tracer.start_as_current_span(
            name,
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=attributes,
            links=links,
            record_exception=False,
            set_status_on_exception=False,
        )
