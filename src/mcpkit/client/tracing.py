"""OpenTelemetry on the client: a CLIENT span around each request sent, its context written into the
request's `params._meta` (`traceparent`, `tracestate`, `baggage`: what the configured propagators
write) so the server's span is its child (runtime/tracing.py: names, attributes, errors).
`Client(tracing=True)` traces to the global TracerProvider, `Client(tracing=provider)` to that one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..protocol.jsonrpc import JSON, RequestId
from ..runtime.session import ProgressCallback, Session
from ..runtime.tracing import TracingOption, record_failure, record_result, span_of, tracer_for

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["ClientTracing"]


class ClientTracing:
    """The client's spans, on the tracer of `tracing` (True: the global TracerProvider's)."""

    def __init__(self, tracing: TracingOption = True) -> None:
        self.tracer = tracer_for(tracing)

    async def request(
        self,
        session: Session,
        method: str,
        params: JSON | None,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
        on_id: Callable[[RequestId], None] | None = None,
    ) -> JSON:
        """`session.request(...)` inside a span whose context rides in the request's `_meta`."""
        from opentelemetry import propagate, trace

        name, attributes = span_of(method, params)
        negotiated = session.connection.negotiated
        if negotiated is not None:
            attributes["mcp.protocol.version"] = negotiated.version
        with self.tracer.start_as_current_span(
            name,
            kind=trace.SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            carrier: dict[str, str] = {}
            propagate.inject(carrier)  # the current context: this span's
            if carrier:
                params = dict(params or {})
                meta = params.get("_meta")
                params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **carrier}
            try:
                result = await session.request(
                    method,
                    params,
                    timeout=timeout,
                    max_timeout=max_timeout,
                    on_progress=on_progress,
                    on_id=lambda rid: _identify(span, rid, on_id),
                )
            except Exception as exc:
                record_failure(span, exc)
                raise
            record_result(span, result)
            return result


def _identify(span: Span, rid: RequestId, on_id: Callable[[RequestId], None] | None) -> None:
    span.set_attribute("jsonrpc.request.id", str(rid))
    if on_id is not None:
        on_id(rid)
